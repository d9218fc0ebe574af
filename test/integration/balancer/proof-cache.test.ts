/**
 * Proof mode and the cache on the wire: an anvil chain (test/support/proof-chain.ts) behind
 * providers that count their calls (test/support/tamper-proxy.ts), its block 2 final. A proven
 * answer about a final block is kept and its hit says proof (headers, attestation); a proven entry
 * of a smaller N is proven again, the header topped up; nothing above finality is kept; identical
 * proof requests in flight share one run. With Redis: the agreed header is shared by the gateways
 * on it (none asks the upstreams for it again), a damaged or forged header there is refused and
 * the header agreed anew, a proven entry serves a gateway in agreement mode as proven, and two
 * `omnigate serve` processes share the header.
 */
import test, { type ExecutionContext } from 'ava';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { RedisStore } from '../../../lib/cache/redis.js';
import { verifyAttestation } from '../../../lib/attest/verify.js';
import { stopAllAnvils } from '../../support/anvil.js';
import { listeningPort, runCli } from '../../support/cli.js';
import { rpc, send, startGateway, type Gateway } from '../../support/gateway.js';
import { EMITTER_TOPIC, proofChain, type ProofChain } from '../../support/proof-chain.js';
import { hasRedis, startRedis, type TestRedis } from '../../support/redis.js';
import { startTamperProxy, type Tamper, type TamperProxy } from '../../support/tamper-proxy.js';

const KEY = 'test-hmac-key-0123456789abcdef';
const SEED = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
const PUBLIC = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a';
const OTHER = '0x00000000000000000000000000000000000c0c00';

let chain: ProofChain;
/** The block every provider calls finalized (block 2: blocks 1 and 2 final, 3 not). */
let finalBlock: { hash: string } & Record<string, unknown>;
test.before(async () => {
  chain = await proofChain('cancun');
  finalBlock = await chain.node.rpc('eth_getBlockByNumber', [hex(chain.blocks.logs), false]);
});
test.after.always(stopAllAnvils);

const hex = (n: number) => `0x${n.toString(16)}`;

interface Provider {
  proxy: TamperProxy;
  /** Header calls pinned to a block (eth_getBlockByNumber / eth_getBlockByHash of a number or hash; not the head tracker's tags). */
  headers(): number;
}

/** A provider over the anvil node whose finalized block is block 2; `lie` rewrites what it answers. */
async function provider(t: ExecutionContext, lie?: Tamper): Promise<Provider> {
  let headers = 0;
  const proxy = await startTamperProxy(chain.node.url, (call, result) => {
    const first = call.params[0];
    if ((call.method === 'eth_getBlockByNumber' || call.method === 'eth_getBlockByHash') && typeof first === 'string' && first.startsWith('0x')) headers += 1;
    if (call.method === 'eth_getBlockByNumber' && first === 'finalized') return finalBlock;
    return lie?.(call, result);
  });
  t.teardown(() => proxy.close());
  return { proxy, headers: () => headers };
}

const headerCalls = (list: Provider[]) => list.reduce((n, p) => n + p.headers(), 0);
const calls = (list: Provider[], method: string) => list.reduce((n, p) => n + p.proxy.calls(method), 0);

async function gateway(t: ExecutionContext, list: Provider[], extra: Record<string, unknown> = {}, verify = 'proof'): Promise<Gateway> {
  // No hedging unless a test sets its own: these tests count the calls asked (a proof's material is
  // hedged as any read, and a loaded machine's stall past a hedge delay would add a hedged call).
  const gw = await startGateway({ refreshInterval: 3600, timeouts: { hedgeMs: 0 }, ...extra, chains: { [chain.chainId]: { rpcs: list.map((p) => p.proxy.url), strategy: 'priority', verify } } });
  t.teardown(() => gw.close());
  await gw.rpc.startHeadTracking().runOnce();
  return gw;
}

const balance = (gw: Gateway, n: number, address: string, id: unknown, block: number = chain.blocks.logs) => gw.post(`/confirmations/${n}/rpc/${chain.chainId}`, rpc('eth_getBalance', [address, hex(block)], id));

async function until(ok: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

test.serial('a proven answer about a final block is kept: its hit says proof, the header it was proven against and who vouched, with an attestation that says so', async (t) => {
  const list = [await provider(t), await provider(t), await provider(t)];
  const gw = await gateway(t, list, { attest: { key: SEED } });
  const first = await balance(gw, 2, chain.recipient, 1);
  t.is(first.status, 200, first.text);
  t.is(first.headers['x-cache'], 'MISS');
  t.is(first.headers['x-verified-by'], 'proof');
  t.is(calls(list, 'eth_getProof'), 1);
  t.is(headerCalls(list), 2, 'the header agreed by two');
  const hit = await balance(gw, 2, chain.recipient, 'again');
  t.is(hit.status, 200, hit.text);
  t.is(hit.headers['x-cache'], 'HIT');
  t.regex(String(hit.headers.age), /^\d+$/);
  t.is(hit.body.id, 'again');
  t.is(hit.body.result, first.body.result);
  t.is(hit.body.result, await chain.node.rpc<string>('eth_getBalance', [chain.recipient, hex(chain.blocks.logs)]));
  t.is(hit.headers['x-verified-by'], 'proof');
  t.is(hit.headers['x-block-hash'], finalBlock.hash);
  t.is(hit.headers['x-checked-urls'], first.headers['x-checked-urls'], 'the proven provider, then the header\'s quorum');
  t.is(String(hit.headers['x-checked-urls']).split(',').length, 2);
  t.is(hit.headers['x-forwarded-from'], first.headers['x-forwarded-from']);
  t.is(hit.headers['x-json-hash'], first.headers['x-json-hash']);
  t.is(calls(list, 'eth_getProof'), 1, 'no proof again');
  t.is(headerCalls(list), 2, 'no header asked again');
  const check = verifyAttestation(String(hit.headers['x-attestation']), PUBLIC, { expect: { verifiedBy: 'proof' } });
  t.true(check.valid, check.valid ? '' : check.reason);
  t.is(check.statement?.block.hash, String(finalBlock.hash).toLowerCase());
  t.is(check.statement?.block.number, hex(chain.blocks.logs));
  // A smaller N is served by the same entry.
  const one = await balance(gw, 1, chain.recipient, 3);
  t.is(one.headers['x-cache'], 'HIT');
  t.is(one.headers['x-verified-by'], 'proof');
  t.is(one.headers['x-required-confirmations'], '1');
  t.is(calls(list, 'eth_getProof'), 1);
});

test.serial('a proven entry of a smaller N is a miss: proven again at the larger N, the header topped up with only the missing vote', async (t) => {
  const list = [await provider(t), await provider(t), await provider(t)];
  const gw = await gateway(t, list);
  const one = await balance(gw, 1, chain.recipient, 1);
  t.is(one.headers['x-verified-by'], 'proof');
  t.is(headerCalls(list), 1);
  t.is(calls(list, 'eth_getProof'), 1);
  const two = await balance(gw, 2, chain.recipient, 2);
  t.is(two.status, 200, two.text);
  t.is(two.headers['x-cache'], 'MISS', 'not a top-up: the entry\'s quorum voted on a header, not on the answer');
  t.is(two.headers['x-verified-by'], 'proof');
  t.is(two.body.result, one.body.result);
  t.is(calls(list, 'eth_getProof'), 2, 'proven again');
  t.is(headerCalls(list), 2, 'the header kept at N=1 counted: one more vote asked');
  t.regex((await gw.request('GET', '/metrics')).text, /omnigate_proof_headers_total\{chain="31337",source="topped-up"\} 1/);
  t.is(String(two.headers['x-checked-urls']).split(',').length, 2);
  const again = await balance(gw, 2, chain.recipient, 3);
  t.is(again.headers['x-cache'], 'HIT');
  t.is(calls(list, 'eth_getProof'), 2);
});

test.serial('nothing above finality is kept: a proven read of block 3 is proven each time, its header agreed each time; nor a proven null', async (t) => {
  const list = [await provider(t), await provider(t)];
  const gw = await gateway(t, list);
  for (const id of [1, 2]) {
    const r = await balance(gw, 2, chain.recipient, id, chain.blocks.empty);
    t.is(r.status, 200, r.text);
    t.is(r.headers['x-cache'], 'MISS');
    t.is(r.headers['x-verified-by'], 'proof');
  }
  t.is(calls(list, 'eth_getProof'), 2);
  t.is(headerCalls(list), 4);
  // A proven absence (past the block's last transaction: null) at a final block is not kept either.
  for (const id of [3, 4]) {
    const r = await gw.post(`/confirmations/2/rpc/${chain.chainId}`, rpc('eth_getTransactionByBlockNumberAndIndex', [hex(chain.blocks.logs), '0x99'], id));
    t.is(r.status, 200, r.text);
    t.is(r.body.result, null);
    t.is(r.headers['x-cache'], 'MISS');
    t.is(r.headers['x-verified-by'], 'proof');
  }
});

test.serial('identical proof requests in flight share one run: one header agreement, one eth_getProof, each client its own id', async (t) => {
  const list = [await provider(t), await provider(t)];
  for (const p of list) p.proxy.slow.set('eth_getProof', 300);
  const gw = await gateway(t, list);
  const replies = await Promise.all(['a', 'b', 'c'].map((id) => balance(gw, 2, chain.recipient, id)));
  t.deepEqual(replies.map((r) => r.status), [200, 200, 200]);
  t.deepEqual(replies.map((r) => r.body.id), ['a', 'b', 'c']);
  for (const r of replies) {
    t.is(r.body.result, replies[0]!.body.result);
    t.is(r.headers['x-verified-by'], 'proof');
    t.is(r.headers['x-block-hash'], finalBlock.hash);
    t.is(r.headers['x-checked-urls'], replies[0]!.headers['x-checked-urls']);
  }
  t.is(calls(list, 'eth_getProof'), 1);
  t.is(headerCalls(list), 2);
  t.regex((await gw.request('GET', '/metrics')).text, /omnigate_merged_requests_total\{chain="31337"\} 2/);
  // mergeRequests: false: each proves alone.
  const alone = [await provider(t), await provider(t)];
  for (const p of alone) p.proxy.slow.set('eth_getProof', 300);
  const solo = await gateway(t, alone, { mergeRequests: false, cache: { memoryBytes: 0 } });
  const both = await Promise.all(['x', 'y'].map((id) => balance(solo, 2, OTHER, id)));
  t.deepEqual(both.map((r) => r.body.id), ['x', 'y']);
  t.is(calls(alone, 'eth_getProof'), 2);
});

/** A client of the test's Redis, closed in teardown. */
function redisClient(t: ExecutionContext, redis: TestRedis): Redis {
  const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
  client.on('error', () => {});
  t.teardown(() => client.disconnect());
  return client;
}

const redisCache = (redis: TestRedis) => ({ cache: { memoryBytes: 1_048_576, redis: { url: redis.url, hmacKey: KEY, prefix: 'test:', timeoutMs: 200 } } });

async function redisGateway(t: ExecutionContext, list: Provider[], redis: TestRedis, verify = 'proof'): Promise<Gateway> {
  const gw = await gateway(t, list, redisCache(redis), verify);
  await until(async () => (await gw.request('GET', '/ready')).body.checks?.cache?.redis === 'ready');
  return gw;
}

/** The Redis key of the header of block 2 by number. */
async function headerKey(client: Redis): Promise<string> {
  let key: string | undefined;
  await until(async () => (key = (await client.keys('test:*')).find((k) => k.includes('eth_getBlockByNumber') && k.includes(hex(chain.blocks.logs)))) !== undefined);
  return key!;
}

test.serial('the headers below a proven eth_getLogs range are kept for proofs only: a later request for one of those blocks gets that block, not the range\'s top', async (t) => {
  const list = [await provider(t), await provider(t), await provider(t)];
  const gw = await gateway(t, list);
  const range = { address: chain.emitter, topics: [EMITTER_TOPIC], fromBlock: hex(chain.blocks.deploy), toBlock: hex(chain.blocks.logs) };
  const logs = await gw.post(`/confirmations/2/rpc/${chain.chainId}`, rpc('eth_getLogs', [range]));
  t.is(logs.status, 200, logs.text);
  t.is(logs.headers['x-verified-by'], 'proof');
  for (const [method, pin] of [['eth_getBlockByNumber', hex(chain.blocks.deploy)], ['eth_getBlockByHash', (await chain.node.rpc<{ hash: string }>('eth_getBlockByNumber', [hex(chain.blocks.deploy), false])).hash]]) {
    const block = await gw.post(`/confirmations/2/rpc/${chain.chainId}`, rpc(method!, [pin, false]));
    t.is(block.status, 200, block.text);
    t.is(block.headers['x-confirmable'], 'true');
    t.is(block.headers['x-cache'], 'MISS', `${method}: not answered from the range's proof`);
    t.deepEqual(block.body.result, await chain.node.rpc('eth_getBlockByNumber', [hex(chain.blocks.deploy), false]));
  }
  // The range's top, agreed on by two, is kept as that block's answer.
  const top = await gw.post(`/confirmations/2/rpc/${chain.chainId}`, rpc('eth_getBlockByNumber', [hex(chain.blocks.logs), false]));
  t.is(top.headers['x-cache'], 'HIT');
  t.deepEqual(top.body.result, finalBlock);
});

if (hasRedis()) {
  test.serial('a header agreed through one gateway is read from Redis by another: zero header calls; a proven entry there serves a gateway in agreement mode as proven', async (t) => {
    const redis = await startRedis(t);
    const list = [await provider(t), await provider(t), await provider(t)];
    const a = await redisGateway(t, list, redis);
    const first = await balance(a, 2, chain.recipient, 1);
    t.is(first.headers['x-verified-by'], 'proof');
    t.is(headerCalls(list), 2);
    const client = redisClient(t, redis);
    await headerKey(client);
    const b = await redisGateway(t, list, redis);
    const other = await balance(b, 2, OTHER, 2);
    t.is(other.status, 200, other.text);
    t.is(other.headers['x-cache'], 'MISS');
    t.is(other.headers['x-verified-by'], 'proof');
    t.is(other.headers['x-block-hash'], finalBlock.hash);
    t.is(other.body.result, await chain.node.rpc<string>('eth_getBalance', [OTHER, hex(chain.blocks.logs)]));
    t.is(headerCalls(list), 2, 'the second gateway asked no upstream for the header');
    t.is(calls(list, 'eth_getProof'), 2);
    t.is(String(other.headers['x-checked-urls']).split(',').length, 2, 'the header\'s quorum as Redis kept it');
    t.regex((await b.request('GET', '/metrics')).text, /omnigate_proof_headers_total\{chain="31337",source="cache"\} 1/);
    // A gateway in agreement mode is answered from the proven entry, and says it was proven.
    const c = await redisGateway(t, list, redis, 'agreement');
    const proven = await balance(c, 2, chain.recipient, 'c');
    t.is(proven.headers['x-cache'], 'HIT');
    t.is(proven.headers['x-verified-by'], 'proof');
    t.is(proven.headers['x-block-hash'], finalBlock.hash);
    t.is(proven.body.id, 'c');
    t.is(calls(list, 'eth_getBalance'), 0);
    // An agreement entry stays an agreement hit, in proof mode too.
    const agreed = await c.post(`/confirmations/2/rpc/${chain.chainId}`, rpc('eth_getBalance', [chain.emitter, hex(chain.blocks.deploy)], 4));
    t.is(agreed.headers['x-verified-by'], 'agreement');
    t.is(calls(list, 'eth_getBalance'), 2);
    const viaProof = await b.post(`/confirmations/2/rpc/${chain.chainId}`, rpc('eth_getBalance', [chain.emitter, hex(chain.blocks.deploy)], 5));
    t.is(viaProof.headers['x-cache'], 'HIT');
    t.is(viaProof.headers['x-verified-by'], 'agreement');
    t.is(viaProof.headers['x-block-hash'], undefined);
  });

  test.serial('a header in Redis that fails its check (a forged field under the right MAC, or a damaged value) is refused: the header is agreed anew and the answer is right', async (t) => {
    const redis = await startRedis(t);
    const list = [await provider(t), await provider(t)];
    const a = await redisGateway(t, list, redis);
    t.is((await balance(a, 2, chain.recipient, 1)).headers['x-verified-by'], 'proof');
    const client = redisClient(t, redis);
    const key = await headerKey(client);
    // A holder of the key plants a header whose stateRoot is not the block's (its hash kept): a proof against it would "prove" anything.
    const planter = new RedisStore({ url: redis.url, prefix: 'test:', ttlSeconds: 60, maxBytes: 2 ** 30, timeoutMs: 200, hmacKey: KEY });
    t.teardown(() => planter.close());
    await until(async () => planter.state === 'ready');
    const stored = (await planter.get(key.slice('test:'.length)))!;
    t.truthy(stored);
    const forged = Buffer.from(stored.body.toString('utf8').replace(/"stateRoot":"0x[0-9a-f]{64}"/, `"stateRoot":"0x${'11'.repeat(32)}"`));
    t.not(forged.toString(), stored.body.toString());
    planter.set(key.slice('test:'.length), { ...stored, body: forged });
    await until(async () => (await client.getBuffer(key))!.includes(Buffer.from('11'.repeat(32))));
    const b = await redisGateway(t, list, redis);
    const before = headerCalls(list);
    const r = await balance(b, 2, OTHER, 2);
    t.is(r.status, 200, r.text);
    t.is(r.headers['x-verified-by'], 'proof');
    t.is(r.headers['x-block-hash'], finalBlock.hash);
    t.is(r.body.result, await chain.node.rpc<string>('eth_getBalance', [OTHER, hex(chain.blocks.logs)]));
    t.is(headerCalls(list) - before, 2, 'the planted header refused: agreed anew by two');
    t.regex((await b.request('GET', '/metrics')).text, /omnigate_proof_headers_total\{chain="31337",source="refused"\} 1/);
    // The header agreed anew replaced it; now a damaged value (a byte flipped: its MAC fails).
    await until(async () => !(await client.getBuffer(key))!.includes(Buffer.from('11'.repeat(32))));
    const value = (await client.getBuffer(key))!;
    value.writeUInt8(value.readUInt8(value.length - 3) ^ 1, value.length - 3);
    await client.set(key, value);
    const c = await redisGateway(t, list, redis);
    const before2 = headerCalls(list);
    const r2 = await balance(c, 2, chain.senders[0]!, 3);
    t.is(r2.status, 200, r2.text);
    t.is(r2.headers['x-verified-by'], 'proof');
    t.is(headerCalls(list) - before2, 2, 'the damaged header refused: agreed anew');
    t.regex((await c.request('GET', '/metrics')).text, /omnigate_cache_redis_lookups_total\{outcome="refused"\} 1/);
  });

  test.serial('Redis gone: a proven read is answered as before, its header agreed by the upstreams', async (t) => {
    const redis = await startRedis(t);
    const list = [await provider(t), await provider(t)];
    const gw = await redisGateway(t, list, redis);
    await redis.stop();
    const r = await balance(gw, 2, chain.recipient, 1, chain.blocks.deploy);
    t.is(r.status, 200, r.text);
    t.is(r.headers['x-verified-by'], 'proof');
    t.is(r.body.result, await chain.node.rpc<string>('eth_getBalance', [chain.recipient, hex(chain.blocks.deploy)]));
    t.is(headerCalls(list), 2);
    t.is(calls(list, 'eth_getProof'), 1);
  });

  test.serial('two `omnigate serve` processes on one Redis: the second proves a read at the block with no upstream call for its header', async (t) => {
    const redis = await startRedis(t);
    const list = [await provider(t), await provider(t)];
    const dir = await mkdtemp(join(tmpdir(), 'omnigate-provcache-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const file = join(dir, 'omnigate.yaml');
    await writeFile(file, [
      'port: 0',
      'refreshInterval: 3600',
      'heads: { intervalMs: 500 }',
      'confirmations: 2',
      'cache:',
      '  redis:',
      `    url: ${redis.url}`,
      '    hmacKey: ${OMNIGATE_CACHE_KEY}',
      '    prefix: "provcache-test:"',
      '    timeoutMs: 500',
      'chains:',
      `  ${chain.chainId}:`,
      '    verify: proof',
      '    strategy: priority',
      '    rpcs:',
      ...list.map((p) => `      - ${p.proxy.url}`),
      '',
    ].join('\n'));
    const env = { OMNIGATE_CACHE_KEY: 'provcache-test-key-0123456789' };
    const runs = [runCli(['serve', '--config', file, '--no-indexer'], env, { t }), runCli(['serve', '--config', file, '--no-indexer'], env, { t })];
    const [a, b] = (await Promise.all(runs.map((r) => listeningPort(r)))).map((p) => `http://127.0.0.1:${p}`);
    for (const base of [a!, b!]) {
      await until(async () => (await send(base, 'GET', '/ready')).body?.checks?.cache?.redis === 'ready');
      await until(async () => ((await send(base, 'GET', '/chains')).body as { heads?: { finalized?: string | null } }[])[0]?.heads?.finalized != null);
    }
    const post = (base: string, address: string, id: unknown) => send(base, 'POST', `/rpc/${chain.chainId}`, JSON.stringify(rpc('eth_getBalance', [address, hex(chain.blocks.logs)], id)), { 'content-type': 'application/json' });
    const first = await post(a!, chain.recipient, 1);
    t.is(first.status, 200, first.text);
    t.is(first.headers['x-verified-by'], 'proof');
    t.is(headerCalls(list), 2);
    const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    client.on('error', () => {});
    t.teardown(() => client.disconnect());
    await until(async () => (await client.keys('provcache-test:*')).some((k) => k.includes('eth_getBlockByNumber')));
    const second = await post(b!, OTHER, 2);
    t.is(second.status, 200, second.text);
    t.is(second.headers['x-verified-by'], 'proof');
    t.is(second.headers['x-block-hash'], first.headers['x-block-hash']);
    t.is(second.body.result, await chain.node.rpc<string>('eth_getBalance', [OTHER, hex(chain.blocks.logs)]));
    t.is(headerCalls(list), 2, 'the second process asked no upstream for the header');
    t.is(calls(list, 'eth_getProof'), 2);
  });
}
