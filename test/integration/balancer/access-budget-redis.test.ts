/**
 * The budgets in credits shared through a real Redis: two `omnigate serve` processes naming one
 * `access.redis` spend ONE day budget (requests alternated between them: the credits admitted in
 * all never pass it, and both refuse once it is spent); two pipelines reusing `cache.redis`'s
 * connection share one concurrency limit (a request held on one, the other refuses, then serves
 * once it is answered); Redis unreachable, each process enforces the budgets from a local bucket.
 */
import test, { type ExecutionContext } from 'ava';
import { deadUrl, defaultAnswer, startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream.js';
import { rpc, send, startGateway, type Reply } from '../../support/gateway.js';
import { listeningPort, logLines, runCli, configFile, chainLines, relayerKeyLines } from '../../support/cli.js';
import { hasRedis, redisServer, startRedis, type TestRedis } from '../../support/redis.js';
import { until } from '../../support/wait.js';

const KEY = 'shared-budget-key-0123456789abcdef';
const ADDRESS = '0x00000000000000000000000000000000000000aa';
const hex = (n: number) => `0x${n.toString(16)}`;
const balance = (block: number, id: unknown = block) => rpc('eth_getBalance', [ADDRESS, hex(block)], id);
const headers = { 'content-type': 'application/json', authorization: `Bearer ${KEY}` };

async function upstreams(t: ExecutionContext): Promise<FakeUpstream[]> {
  const list = await Promise.all([0, 1].map(() => startFakeUpstream({ answer: defaultAnswer })));
  t.teardown(() => Promise.all(list.map((f) => f.close())));
  return list;
}

const budgetsReady = async (base: string) => (await send(base, 'GET', '/ready')).body?.checks?.budgets?.redis === 'ready';

if (hasRedis()) {
  test.serial('two omnigate serve processes sharing one Redis spend one day budget, not two', async (t) => {
    const redis = await startRedis(t);
    const list = await upstreams(t);
    const file = await configFile(t, [
      'port: 0',
      'refreshInterval: 3600',
      'access:',
      '  redis:',
      `    url: ${redis.url}`,
      '    prefix: "budget-test:"',
      '    timeoutMs: 1000',
      ...relayerKeyLines('${BUDGET_KEY}'),
      ...chainLines(list),
      '',
    ].join('\n'), 'omnigate-budget-');
    const env = { BUDGET_KEY: KEY };
    const runs = [runCli(['serve', '--config', file, '--no-indexer'], env, { t }), runCli(['serve', '--config', file, '--no-indexer'], env, { t })];
    const bases = (await Promise.all(runs.map((r) => listeningPort(r)))).map((p) => `http://127.0.0.1:${p}`);
    for (const base of bases) await until(() => budgetsReady(base));

    // Ten balances at N=1 (20 credits each), alternated between the two: the day holds five.
    const replies: Reply[] = [];
    for (let i = 0; i < 10; i++) replies.push(await send(bases[i % 2]!, 'POST', '/confirmations/1/rpc/1337', JSON.stringify(balance(0x100 + i, i)), headers));
    const admitted = replies.filter((r) => r.status === 200);
    const refused = replies.filter((r) => r.status === 429);
    t.is(admitted.length + refused.length, 10, replies.map((r) => `${r.status} ${r.text}`).join('\n'));
    const spent = admitted.reduce((n, r) => n + Number(r.headers['x-credits']), 0);
    t.true(spent <= 100, `${spent} credits admitted in all, over the day's 100`);
    t.is(admitted.length, 5, 'one budget: five answers of 20, not ten');
    t.deepEqual(replies.map((r) => r.status), [200, 200, 200, 200, 200, 429, 429, 429, 429, 429]);
    // Both replicas refuse once it is spent, each with the client's id and what is left: nothing.
    for (const [i, r] of replies.entries()) {
      if (r.status !== 429) continue;
      t.is(r.body.id, i);
      t.is(r.body.error.code, -32020);
      t.is(r.body.error.data.reason, 'day');
      t.is(r.headers['x-credits-remaining-day'], '0');
      t.truthy(r.headers['retry-after']);
    }
    t.is(admitted.at(-1)!.headers['x-credits-remaining-day'], '0');
    // The key is in no log line of either process.
    for (const run of runs) t.false(JSON.stringify(logLines(run)).includes(KEY));
  });

  test.serial('two pipelines reusing cache.redis share one concurrency limit', async (t) => {
    const redis: TestRedis = await startRedis(t);
    const list = await upstreams(t);
    const raw = {
      refreshInterval: 3600,
      // The budgets take cache.redis's timeoutMs: one a loaded machine does not outrun (past it a
      // pipeline grants from its own bucket, as documented, which is not what this test is about).
      cache: { redis: { url: redis.url, hmacKey: 'budget-cache-key-0123456789', prefix: 'budget-conc:', timeoutMs: 10_000 } },
      access: { keys: [{ label: 'relayer', key: KEY, maxConcurrent: 1 }] },
      chains: { 1337: { rpcs: list.map((f) => f.url) } },
    };
    const a = await startGateway(raw);
    const b = await startGateway(raw);
    t.teardown(async () => {
      await a.close();
      await b.close();
    });
    for (const gw of [a, b]) await until(() => budgetsReady(gw.url));
    for (const f of list) f.delayMs = 1_500;
    const calls = () => list.reduce((n, f) => n + f.calls, 0);
    const before = calls();
    const held = a.post('/confirmations/1/rpc/1337', balance(0x201, 'held'), headers);
    await until(async () => calls() > before);
    const other = await b.post('/confirmations/1/rpc/1337', balance(0x202, 'other'), headers);
    t.is(other.status, 429, other.text);
    t.is(other.body.error.data.reason, 'concurrent');
    t.is((await held).status, 200);
    for (const f of list) f.delayMs = 0;
    const after = await b.post('/confirmations/1/rpc/1337', balance(0x203, 'after'), headers);
    t.is(after.status, 200, after.text);
    t.is(after.headers['x-credits'], '20');
  });
}

test('Redis unreachable: the budgets are enforced from a local bucket, and /ready says so', async (t) => {
  const list = await upstreams(t);
  const gw = await startGateway({
    refreshInterval: 3600,
    access: { redis: { url: (await deadUrl()).replace(/^http:/, 'redis:').replace(/\/$/, '/0'), prefix: 'budget-down:' }, keys: [{ label: 'relayer', key: KEY, creditsPerDay: 30 }] },
    chains: { 1337: { rpcs: list.map((f) => f.url) } },
  });
  t.teardown(() => gw.close());
  const first = await gw.post('/confirmations/1/rpc/1337', balance(0x301, 'first'), headers);
  t.is(first.status, 200, first.text);
  t.is(first.headers['x-credits'], '20');
  t.is(first.headers['x-credits-remaining-day'], '10');
  const second = await gw.post('/confirmations/1/rpc/1337', balance(0x302, 'second'), headers);
  t.is(second.status, 429, second.text);
  t.is(second.body.error.data.reason, 'day');
  const ready = await gw.request('GET', '/ready');
  t.is(ready.status, 200);
  t.not(ready.body.checks.budgets.redis, 'ready');
  t.regex(ready.body.checks.budgets.note, /each replica enforces the key budgets on its own/);
});

if (!hasRedis()) {
  test(`the Redis budget tests need ${redisServer}`, (t) => {
    if (process.env.OMNIGATE_REQUIRE_REDIS === '1') t.fail(`${redisServer} is not installed`);
    else t.pass();
  });
}
