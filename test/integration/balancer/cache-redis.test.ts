/**
 * The cache's shared level on a real redis-server: an answer confirmed through one gateway is
 * served by another with zero upstream calls; a damaged or foreign value is refused, never
 * served; Redis killed and restarted mid-test: the gateways keep answering from the upstreams,
 * say so in /ready and /metrics, and share again once it is back. An entry confirmed by fewer
 * than a request's N, found in Redis, is topped up with only the missing votes and replaced there;
 * disputed by them, it is deleted there.
 */
import { createHash } from 'node:crypto';
import test, { type ExecutionContext } from 'ava';
import { Redis } from 'ioredis';
import { RedisStore } from '../../../lib/cache/redis.js';
import { finalizedChain, startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream.js';
import { rpc, startGateway, type Gateway } from '../../support/gateway.js';
import { hasRedis, redisServer, startRedis, type TestRedis } from '../../support/redis.js';
import { until as waitUntil } from '../../support/wait.js';

const ADDRESS = '0x00000000000000000000000000000000000000aa';
const KEY = 'test-hmac-key-0123456789abcdef';
const hex = (n: number) => `0x${n.toString(16)}`;

/** A chain at block 100, finalized 90. */
const chainAnswer = finalizedChain(() => 90);

async function upstreams(t: ExecutionContext): Promise<FakeUpstream[]> {
  const list = await Promise.all([0, 1, 2].map(() => startFakeUpstream({ answer: chainAnswer })));
  t.teardown(() => Promise.all(list.map((f) => f.close())));
  return list;
}

async function gateway(t: ExecutionContext, list: FakeUpstream[], redis: TestRedis, extra: Record<string, unknown> = {}): Promise<Gateway> {
  const gw = await startGateway({
    refreshInterval: 3600,
    cache: { memoryBytes: 1_048_576, redis: { url: redis.url, hmacKey: KEY, prefix: 'test:', timeoutMs: 200, ...extra } },
    chains: { 1337: { rpcs: list.map((f) => f.url) } },
  });
  t.teardown(() => gw.close());
  await gw.rpc.startHeadTracking().runOnce();
  await until(async () => (await gw.request('GET', '/ready')).body.checks?.cache?.redis === 'ready');
  return gw;
}

const until = (ok: () => boolean | Promise<boolean>, ms = 20_000) => waitUntil(ok, ms, 50);

const balances = (list: FakeUpstream[]) =>
  list.reduce((n, f) => n + f.requests.filter((r) => (r.body as { method?: string } | undefined)?.method === 'eth_getBalance').length, 0);

/** eth_getBalance calls per upstream. */
const perUpstream = (list: FakeUpstream[]) => list.map((f) => f.requests.filter((r) => (r.body as { method?: string } | undefined)?.method === 'eth_getBalance').length);

/** A client of the test's Redis, closed in teardown (its errors while Redis is down are expected). */
function redisClient(t: ExecutionContext, redis: TestRedis): Redis {
  const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  t.teardown(() => client.disconnect());
  return client;
}

const ask = (gw: Gateway, block: number, id: unknown, headers: Record<string, string> = {}) =>
  gw.post('/confirmations/2/rpc/1337', rpc('eth_getBalance', [ADDRESS, hex(block)], id), headers);

if (hasRedis()) {
  test.serial('an answer confirmed through one gateway is served by another from Redis, with the quorum that confirmed it and no upstream call', async (t) => {
    const redis = await startRedis(t);
    const list = await upstreams(t);
    const a = await gateway(t, list, redis);
    const b = await gateway(t, list, redis);
    const first = await ask(a, 0x10, 1);
    t.is(first.headers['x-cache'], 'MISS');
    t.is(balances(list), 2);
    const second = await ask(b, 0x10, 'from-b');
    t.is(second.status, 200, second.text);
    t.is(second.headers['x-cache'], 'HIT');
    t.is(balances(list), 2, 'zero upstream calls through the second gateway');
    t.is(second.body.id, 'from-b');
    t.is(second.body.result, first.body.result);
    for (const h of ['x-checked-urls', 'x-forwarded-from', 'x-json-hash']) t.is(second.headers[h], first.headers[h], h);
    const metrics = (await b.request('GET', '/metrics')).text;
    t.regex(metrics, /omnigate_cache_redis_lookups_total\{outcome="hit"\} 1/);
    t.regex(metrics, /omnigate_cache_redis_up 1/);
    // Every value expires, and no provider URL is stored.
    const client = redisClient(t, redis);
    const keys = await client.keys('test:*');
    t.true(keys.length >= 1);
    for (const key of keys) {
      const ttl = await client.ttl(key);
      t.true(ttl > 0 && ttl <= 86_400, `${key} expires (ttl ${ttl})`);
      const value = (await client.getBuffer(key))!.toString('latin1');
      for (const f of list) t.false(value.includes(new URL(f.url).host), 'no upstream URL in Redis');
      // Nor a plain hash of one: the URL holds the provider key, and a short or numeric key could be
      // guessed and tested against it offline. The quorum's ids are keyed by hmacKey.
      const plainIds = list.flatMap((f) => [f.url, new URL(f.url).href]).map((u) => createHash('sha256').update(u).digest('base64url').slice(0, 22));
      for (const id of plainIds) t.false(value.includes(id), 'no plain hash of an upstream URL in Redis');
      t.regex(value, /"q":\["[A-Za-z0-9_-]{22}","[A-Za-z0-9_-]{22}"\]/, 'the quorum, as two ids');
    }
  });

  test.serial('a damaged value or one written without the key is refused, deleted and never served', async (t) => {
    const redis = await startRedis(t);
    const list = await upstreams(t);
    const gw = await gateway(t, list, redis);
    const honest = await ask(gw, 0x11, 1);
    t.is(honest.status, 200);
    const client = redisClient(t, redis);
    await until(async () => (await client.keys('test:*')).length === 1);
    const [key] = await client.keys('test:*');
    // A writer with another key plants a lie: a forged balance, sealed under its own HMAC key.
    const forger = new RedisStore({ url: redis.url, prefix: 'test:', ttlSeconds: 60, maxBytes: 2 ** 30, timeoutMs: 200, hmacKey: 'not-the-deployment-key-000' });
    t.teardown(() => forger.close());
    await until(async () => forger.state === 'ready');
    const stored = (await client.getBuffer(key!))!;
    const forged = Buffer.from(stored.toString('latin1').replace(/"result":"0x[0-9a-f]+"/, '"result":"0xdead"'), 'latin1');
    t.not(forged.toString('latin1'), stored.toString('latin1'));
    forger.set(key!.slice('test:'.length), { body: Buffer.from('{"jsonrpc":"2.0","id":1,"result":"0xdead"}'), hash: 'forged', quorum: [], confirmations: 3, at: Date.now(), block: 1n });
    await until(async () => (await client.getBuffer(key!))!.toString().includes('0xdead'));
    // A process restart loses the memory level: a fresh gateway must go to Redis.
    const fresh = await gateway(t, list, redis);
    const calls = balances(list);
    const r1 = await ask(fresh, 0x11, 2);
    t.is(r1.status, 200);
    t.is(r1.body.result, honest.body.result, 'the forged answer is never served');
    t.is(r1.headers['x-cache'], 'MISS');
    t.is(balances(list), calls + 2, 'asked the upstreams instead');
    // A value damaged in place (one byte of the answer flipped, MAC unchanged) is refused too.
    await until(async () => {
      const v = await client.getBuffer(key!);
      return v !== null && !v.toString().includes('0xdead');
    });
    const good = (await client.getBuffer(key!))!;
    const damaged = Buffer.from(good);
    damaged.writeUInt8(damaged[damaged.length - 3]! ^ 0x01, damaged.length - 3);
    await client.set(key!, damaged);
    const again = await gateway(t, list, redis);
    const r2 = await ask(again, 0x11, 3);
    t.is(r2.body.result, honest.body.result);
    t.is(r2.headers['x-cache'], 'MISS');
    const metrics = (await again.request('GET', '/metrics')).text;
    t.regex(metrics, /omnigate_cache_redis_lookups_total\{outcome="refused"\} 1/);
  });

  test.serial('Redis killed mid-test: requests go on from the upstreams, /ready and /metrics say so; restarted: sharing resumes by itself', async (t) => {
    const redis = await startRedis(t);
    const list = await upstreams(t);
    const a = await gateway(t, list, redis);
    const b = await gateway(t, list, redis);
    await redis.stop();
    await until(async () => (await a.request('GET', '/ready')).body.checks?.cache?.redis === 'down');
    const started = Date.now();
    const during = await ask(a, 0x12, 1);
    t.is(during.status, 200, during.text);
    t.is(during.headers['x-confirmable'], 'true');
    t.true(Date.now() - started < 5_000, 'not held up by Redis');
    const ready = await a.request('GET', '/ready');
    t.is(ready.status, 200, 'still ready: it serves from the upstreams');
    t.is(ready.body.checks.cache.redis, 'down');
    t.regex((await a.request('GET', '/metrics')).text, /omnigate_cache_redis_up 0/);
    await redis.start();
    await until(async () => (await a.request('GET', '/ready')).body.checks?.cache?.redis === 'ready', 15_000);
    await until(async () => (await b.request('GET', '/ready')).body.checks?.cache?.redis === 'ready', 15_000);
    await ask(a, 0x13, 2);
    const client = redisClient(t, redis);
    await until(async () => (await client.keys('test:*')).length === 1);
    const calls = balances(list);
    const shared = await ask(b, 0x13, 3);
    t.is(shared.headers['x-cache'], 'HIT');
    t.is(balances(list), calls);
  });

  test.serial('top-up from Redis: an entry confirmed by 2 through one gateway answers N=3 through another with one call; the N=3 entry replaces it for every gateway', async (t) => {
    const redis = await startRedis(t);
    const list = await upstreams(t);
    const a = await gateway(t, list, redis);
    const b = await gateway(t, list, redis);
    const two = await ask(a, 0x14, 1);
    t.is(two.status, 200, two.text);
    const before = perUpstream(list);
    const client = redisClient(t, redis);
    await until(async () => (await client.keys('test:*')).length === 1);
    const [key] = await client.keys('test:*');
    const stored = (await client.getBuffer(key!))!;
    const three = await b.post('/confirmations/3/rpc/1337', rpc('eth_getBalance', [ADDRESS, hex(0x14)], 'b'));
    t.is(three.status, 200, three.text);
    t.is(three.headers['x-cache'], 'TOPUP');
    t.deepEqual(perUpstream(list), before.map((n) => (n === 0 ? 1 : n)), 'one call, to the upstream outside the quorum');
    t.deepEqual(String(three.headers['x-checked-urls']).split(',').slice(0, 2), String(two.headers['x-checked-urls']).split(','));
    t.is(String(three.headers['x-checked-urls']).split(',').length, 3);
    t.is(three.headers['x-forwarded-from'], two.headers['x-forwarded-from']);
    t.is(three.body.result, two.body.result);
    // Gateway a holds the N=2 entry in memory; Redis now has the N=3 one: a hit, no call.
    await until(async () => !(await client.getBuffer(key!))!.equals(stored));
    const fromA = await a.post('/confirmations/3/rpc/1337', rpc('eth_getBalance', [ADDRESS, hex(0x14)], 'a'));
    t.is(fromA.headers['x-cache'], 'HIT');
    t.is(fromA.headers['x-checked-urls'], three.headers['x-checked-urls']);
    t.is(balances(list), 3, 'three calls in all');
  });

  test.serial('top-up from Redis disputed: the missing voter gives another answer: 502, one call, and the entry is deleted from Redis', async (t) => {
    const redis = await startRedis(t);
    const list = await upstreams(t);
    const a = await gateway(t, list, redis);
    const b = await gateway(t, list, redis);
    const two = await ask(a, 0x15, 1);
    t.is(two.status, 200, two.text);
    const before = perUpstream(list);
    const client = redisClient(t, redis);
    await until(async () => (await client.keys('test:*')).length === 1);
    list[before.indexOf(0)]!.profile = 'liar';
    const three = await b.post('/confirmations/3/rpc/1337', rpc('eth_getBalance', [ADDRESS, hex(0x15)], 2));
    t.is(three.status, 502, three.text);
    t.is(three.body.error.code, -32010);
    t.deepEqual(perUpstream(list), before.map((n) => (n === 0 ? 1 : n)));
    await until(async () => (await client.keys('test:*')).length === 0);
    t.regex((await b.request('GET', '/metrics')).text, /omnigate_cache_disputed_total\{chain="1337"\} 1/);
  });

  test.serial('a vote of an upstream this gateway does not have does not count: an entry from Redis is topped up with the votes it lacks here', async (t) => {
    const redis = await startRedis(t);
    const list = await upstreams(t);
    const extra = await startFakeUpstream({ answer: chainAnswer });
    t.teardown(() => extra.close());
    const a = await gateway(t, list, redis);
    const two = await ask(a, 0x16, 1);
    t.is(two.status, 200, two.text);
    const client = redisClient(t, redis);
    await until(async () => (await client.keys('test:*')).length === 1);
    const calls = perUpstream(list);
    const [kept, gone] = list.filter((_, i) => calls[i] === 1);
    const outsider = list[calls.indexOf(0)]!;
    t.deepEqual(String(two.headers['x-checked-urls']).split(',').sort(), [kept!.url, gone!.url].sort());
    // Another deployment of the chain: one upstream of the quorum is no longer configured, a new one is.
    const c = await gateway(t, [kept!, outsider, extra], redis);
    const again = await ask(c, 0x16, 'c');
    t.is(again.status, 200, again.text);
    t.is(again.headers['x-cache'], 'TOPUP', 'not a hit: only one of its two votes counts here');
    const checked = String(again.headers['x-checked-urls']).split(',');
    t.is(checked.length, 2);
    t.is(checked[0], kept!.url, 'the vote it keeps first');
    t.false(checked.includes(gone!.url));
    t.deepEqual(perUpstream([...list, extra]).reduce((x, y) => x + y) - 2, 1, 'one call, for the vote it lacks');
    t.is(perUpstream([gone!])[0], 1, 'the upstream it no longer has is not asked');
    t.is(again.body.result, two.body.result);
  });

  test.serial('the finalized route never goes back across replicas: one that saw a lower finalized head pins to the block another gave', async (t) => {
    const redis = await startRedis(t);
    let finalized = 95;
    const list = await Promise.all([0, 1, 2].map(() => startFakeUpstream({ answer: finalizedChain(() => finalized) })));
    t.teardown(() => Promise.all(list.map((f) => f.close())));
    const a = await gateway(t, list, redis);
    const first = await a.post('/confirmations/2/finalized/rpc/1337', rpc('eth_getBalance', [ADDRESS, 'latest'], 1));
    t.is(first.status, 200, first.text);
    const asked = () => list.flatMap((f) => f.requests.filter((r) => (r.body as { method?: string }).method === 'eth_getBalance').map((r) => (r.body as { params: unknown[] }).params[1]));
    t.deepEqual([...new Set(asked())], ['0x5f']);
    // The providers' finalized heads drop; a replica that starts now sees only 80.
    finalized = 80;
    const b = await gateway(t, list, redis);
    const second = await b.post('/confirmations/2/finalized/rpc/1337', rpc('eth_getBalance', [ADDRESS, 'latest'], 2));
    t.is(second.status, 200, second.text);
    t.is(asked().at(-1), '0x5f', 'pinned to the block the other replica gave, not 80');
    const client = redisClient(t, redis);
    t.regex(String(await client.get('test:finalized:1337:2')), /^95\./);
  });

  test.serial('an entry another replica kept at a block this one does not hold final is not served from Redis: the upstreams are asked', async (t) => {
    const redis = await startRedis(t);
    let finalized = 90;
    const list = await Promise.all([0, 1, 2].map(() => startFakeUpstream({ answer: finalizedChain(() => finalized) })));
    t.teardown(() => Promise.all(list.map((f) => f.close())));
    const a = await gateway(t, list, redis);
    for (const [block, id] of [[0x50, 1], [0x5a, 2]] as const) t.is((await ask(a, block, id)).headers['x-cache'], 'MISS');
    t.is(balances(list), 4);
    const client = redisClient(t, redis);
    await until(async () => (await client.keys('test:*')).length === 2);
    // Replica B's providers hold only block 80 as final (A's view of 90 was wrong, or came from
    // another version or config of A).
    finalized = 80;
    const b = await gateway(t, list, redis);
    t.like((await b.request('GET', '/chains')).body[0].heads, { finalized: '80' });
    const final = await ask(b, 0x50, 3);
    t.is(final.headers['x-cache'], 'HIT', 'block 80 is final here too');
    t.is(balances(list), 4);
    const above = await ask(b, 0x5a, 4);
    t.is(above.status, 200, above.text);
    t.is(above.headers['x-cache'], 'MISS', 'block 90 is not final by this replica\'s providers');
    t.is(above.headers['x-confirmable'], 'true');
    t.is(balances(list), 6, 'asked of two upstreams');
  });

  test.serial('the finalized route\'s block written into Redis without the key is refused and deleted: latest is not pinned to a block the providers do not report as finalized', async (t) => {
    const redis = await startRedis(t);
    const list = await upstreams(t);
    const client = redisClient(t, redis);
    // Block 99: every provider has it (head 100), none reports it as finalized (90).
    await client.set('test:finalized:1337:2', '99');
    const gw = await gateway(t, list, redis);
    const r = await gw.post('/confirmations/2/finalized/rpc/1337', rpc('eth_getBalance', [ADDRESS, 'latest'], 1));
    t.is(r.status, 200, r.text);
    const asked = list.flatMap((f) => f.requests.filter((q) => (q.body as { method?: string }).method === 'eth_getBalance').map((q) => (q.body as { params: unknown[] }).params[1]));
    t.deepEqual([...new Set(asked)], ['0x5a'], 'pinned to the block N providers report as finalized, not to the forged 99');
    const block = await gw.post('/confirmations/2/finalized/rpc/1337', rpc('eth_blockNumber', [], 2));
    t.is(block.body.result, '0x5a');
    const stored = await client.get('test:finalized:1337:2');
    t.regex(String(stored), /^90\./, 'replaced by the route\'s own block, authenticated');
    // The authenticated value is shared as before: another replica takes it.
    const other = await gateway(t, list, redis);
    t.is((await other.post('/confirmations/2/finalized/rpc/1337', rpc('eth_blockNumber', [], 3))).body.result, '0x5a');
    // A forged value with a MAC of its own making is refused too.
    await client.set('test:finalized:1337:2', `99.${'00'.repeat(32)}`);
    const again = await gw.post('/confirmations/2/finalized/rpc/1337', rpc('eth_getBalance', [ADDRESS, 'latest'], 4));
    t.is(again.status, 200, again.text);
    const askedAgain = list.flatMap((f) => f.requests.filter((q) => (q.body as { method?: string }).method === 'eth_getBalance').map((q) => (q.body as { params: unknown[] }).params[1]));
    t.is(askedAgain.at(-1), '0x5a');
    t.is(await client.get('test:finalized:1337:2'), null, 'deleted');
  });

  test.serial('an entry that another replica confirmed with two upstreams this replica knows as one provider counts one vote here: a top-up, not a hit', async (t) => {
    const redis = await startRedis(t);
    const list = await upstreams(t);
    const a = await gateway(t, list, redis);
    // Replica B names the first two upstreams as one provider (say, two endpoints of one company).
    const b = await startGateway({
      refreshInterval: 3600,
      cache: { memoryBytes: 1_048_576, redis: { url: redis.url, hmacKey: KEY, prefix: 'test:', timeoutMs: 200 } },
      chains: { 1337: { rpcs: [{ url: list[0]!.url, provider: 'one' }, { url: list[1]!.url, provider: 'one' }, list[2]!.url] } },
    });
    t.teardown(() => b.close());
    await b.rpc.startHeadTracking().runOnce();
    await until(async () => (await b.request('GET', '/ready')).body.checks?.cache?.redis === 'ready');
    const first = await ask(a, 0x10, 1);
    t.is(first.status, 200, first.text);
    t.deepEqual(String(first.headers['x-checked-urls']).split(','), [list[0]!.url, list[1]!.url]);
    t.deepEqual(perUpstream(list), [1, 1, 0]);
    const second = await ask(b, 0x10, 2);
    t.is(second.status, 200, second.text);
    t.is(second.headers['x-confirmable'], 'true');
    t.not(second.headers['x-cache'], 'HIT', 'two votes of one provider are not two confirmations');
    t.deepEqual(String(second.headers['x-checked-urls']).split(','), [list[0]!.url, list[2]!.url]);
    t.deepEqual(perUpstream(list), [1, 1, 1], 'the missing vote asked of the other provider');
  });
} else {
  test('the Redis cache tests need redis-server', (t) => {
    const fix = 'install it (apt-get install redis-server) or set OMNIGATE_REDIS_SERVER to a redis-server executable';
    if (process.env.OMNIGATE_REQUIRE_REDIS === '1') {
      t.fail(`OMNIGATE_REQUIRE_REDIS=1 but ${redisServer} does not run: ${fix}`);
      return;
    }
    const message = `SKIPPED the Redis cache tests: ${redisServer} does not run here; ${fix}`;
    console.warn(`\n*** ${message} ***\n`);
    t.log(message);
    t.pass();
  });
}
