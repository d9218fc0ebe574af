/**
 * Real clients through the gateway, unchanged (issue 3, item 9): an ethers v6 JsonRpcProvider
 * (which batches by default) and a viem public client (plain and `batch: true`), pointed at
 * `/rpc/<id>` and `/confirmations/<n>/rpc/<id>`, over fake upstreams and over real local anvil
 * nodes with identical state. Asserted on the wire: what the clients return, how many upstreams
 * each request reached, and the seed headers.
 *
 * Client settings that differ from the defaults, and why:
 * - viem `retryCount: 0`: viem retries HTTP 502 three times by default, which would only repeat
 *   the same request and blur the upstream call counts;
 * - every ethers provider is destroy()ed; nothing polls (no watch or on() subscriptions).
 */
import test, { type ExecutionContext } from 'ava';
import { AbiCoder, JsonRpcProvider, Transaction, concat, getAddress, isError, type Block, type Log } from 'ethers';
import {
  BaseError,
  CallExecutionError,
  ExecutionRevertedError,
  HttpRequestError,
  RpcRequestError,
  createPublicClient,
  http,
  type Hex,
  type PublicClient,
} from 'viem';
import { anvilWallet, seedChain, signTx, startAnvils, stopAllAnvils, type AnvilCluster, type AnvilNode, type SeededChain } from '../../support/anvil.js';
import { block as fakeBlock, defaultAnswer, startFakeUpstream, type AnswerFn, type FakeUpstream, type RpcCallIn } from '../../support/fake-upstream.js';
import { learnHeads, rpc, startGateway, type Gateway, type Reply } from '../../support/gateway.js';
import { blockParam } from '../../support/spec-tables.js';

// ---------------------------------------------------------------------------------------------
// Fake upstreams: a small deterministic chain (id 1337) whose answers ethers' and viem's
// formatters accept (full block headers, an ABI-encoded revert reason).
// ---------------------------------------------------------------------------------------------

const FAKE_CHAIN = 1337;
const ACCOUNT = '0x1111111111111111111111111111111111111111';
const CONTRACT = '0x2222222222222222222222222222222222222222';
/** eth_call data the fake contract answers; any other data reverts with Error("nope"). */
const GOOD_DATA = '0x01';
const WORD_42 = `0x${'2a'.padStart(64, '0')}`;
const REVERT_DATA = concat(['0x08c379a0', AbiCoder.defaultAbiCoder().encode(['string'], ['nope'])]);
/** defaultAnswer's eth_getBalance: 1 ETH + the length of the address string. */
const FAKE_BALANCE = 10n ** 18n + BigInt(ACCOUNT.length);

const clientAnswer: AnswerFn = (call: RpcCallIn) => {
  const p = call.params ?? [];
  switch (call.method) {
    case 'eth_getBlockByNumber':
      return {
        result: {
          ...fakeBlock(String(p[0]), p[1] === true),
          difficulty: '0x0',
          extraData: '0x',
          nonce: '0x0000000000000000',
          baseFeePerGas: '0x7',
          mixHash: `0x${'00'.repeat(32)}`,
          sha3Uncles: `0x${'1d'.repeat(32)}`,
          stateRoot: `0x${'5a'.repeat(32)}`,
          receiptsRoot: `0x${'5b'.repeat(32)}`,
          transactionsRoot: `0x${'5c'.repeat(32)}`,
          logsBloom: `0x${'00'.repeat(256)}`,
          size: '0x220',
        },
      };
    case 'eth_call': {
      const tx = (p[0] ?? {}) as { data?: string; input?: string };
      if ((tx.data ?? tx.input) === GOOD_DATA) return { result: WORD_42 };
      return { error: { code: 3, message: 'execution reverted: nope', data: REVERT_DATA } };
    }
    default:
      return defaultAnswer(call);
  }
};

interface Fakes {
  fakes: FakeUpstream[];
  gw: Gateway;
  close(): Promise<void>;
}

async function fakeSetup(count = 3): Promise<Fakes> {
  const fakes = await Promise.all(Array.from({ length: count }, () => startFakeUpstream({ answer: clientAnswer })));
  const gw = await startGateway({ confirmations: 1, chains: { [FAKE_CHAIN]: { rpcs: fakes.map((f) => f.url) } } });
  // (heads known, block 16: a log range is voted on only by upstreams known to have its toBlock)
  await learnHeads(gw, fakes);
  return { fakes, gw, close: async () => void (await Promise.all([gw.close(), ...fakes.map((f) => f.close())])) };
}

/** Upstream HTTP requests per fake. */
const calls = (fakes: FakeUpstream[]) => fakes.map((f) => f.calls);
/** The calls a fake received, alone or in upstream batches (a client batch's calls to one upstream go as one). */
const callsOf = (f: FakeUpstream) => f.requests.flatMap((r) => (Array.isArray(r.body) ? r.body : [r.body])) as { method: string; params?: unknown[]; id: unknown }[];
const callCounts = (fakes: FakeUpstream[]) => fakes.map((f) => callsOf(f).length);

const isHexNumber = (v: unknown) => typeof v === 'string' && /^0x[0-9a-f]+$/i.test(v);
function pinned(call: { method: string; params?: unknown[] }): boolean {
  const where = blockParam[call.method];
  if (where === undefined) return false;
  const params = call.params ?? [];
  if (where === 'filter') {
    const f = (params[0] ?? {}) as Record<string, unknown>;
    return typeof f.blockHash === 'string' || (isHexNumber(f.fromBlock) && isHexNumber(f.toBlock));
  }
  return isHexNumber(params[where]);
}
type Body = { method: string; params?: unknown[]; id: unknown } | { method: string; params?: unknown[]; id: unknown }[];
const members = (body: unknown) => (Array.isArray(body) ? body : [body]) as { method: string; params?: unknown[]; id: unknown }[];
// eth_chainId / net_version are fixed for a chain: they do not spoil a batch of pinned reads.
const neutral = (call: { method: string }) => call.method === 'eth_chainId' || call.method === 'net_version';
const confirmableBody = (body: unknown) =>
  Array.isArray(body) ? members(body).every((c) => pinned(c) || neutral(c)) && members(body).some(pinned) : pinned(body as { method: string });

/**
 * The fan-out seen from the fakes, for a gateway asked for `n` confirmations over healthy fakes
 * that all agree: every call reaches fakes[0]; a confirmable one also reaches fakes[1..n-1],
 * with the very same body; nothing reaches the fakes after them. A batch's members are asked
 * each on its own (issue 25), their calls to one upstream sent as one upstream batch (in any
 * order), so calls are compared, not requests; a chain constant (eth_chainId) follows the N of
 * the pinned calls of its batch, so it may reach fakes[1..n-1] too.
 */
function assertFanout(t: ExecutionContext, fakes: FakeUpstream[], n: number): void {
  const seen = callsOf(fakes[0]!) as Body[];
  const sorted = (bodies: unknown[]) => bodies.map((b) => JSON.stringify(b)).sort();
  const confirmable = seen.filter(confirmableBody);
  for (const [i, fake] of fakes.entries()) {
    const expected = i === 0 ? seen : i < n ? confirmable : [];
    const got = callsOf(fake);
    const followers = i > 0 && i < n ? got.filter((b) => neutral(b as { method: string })) : [];
    t.deepEqual(
      sorted(got.filter((b) => !followers.includes(b))),
      sorted(expected),
      `fake ${i} should have seen ${expected.length} of the ${seen.length} calls`,
    );
    t.true(followers.length <= seen.filter((b) => neutral(b as { method: string })).length);
  }
}

// ---------------------------------------------------------------------------------------------
// ethers v6 over fake upstreams
// ---------------------------------------------------------------------------------------------

test('ethers (staticNetwork, batched): results, a revert as CALL_EXCEPTION, confirmable batches on 2 upstreams', async (t) => {
  const { fakes, gw, close } = await fakeSetup();
  const provider = new JsonRpcProvider(`${gw.url}/confirmations/2/rpc/${FAKE_CHAIN}`, FAKE_CHAIN, { staticNetwork: true });
  try {
    t.is(await provider.getBlockNumber(), 0x10);
    t.deepEqual(calls(fakes), [1, 0, 0], 'eth_blockNumber is never confirmable: 1 upstream');

    // Issued in the same tick: ethers sends them as one batch, every member pinned → each member to 2 upstreams.
    const [balance, block, logs, good, reverted] = await Promise.allSettled([
      provider.getBalance(ACCOUNT, 16),
      provider.getBlock(16),
      provider.getLogs({ fromBlock: 15, toBlock: 16 }),
      provider.call({ to: CONTRACT, data: GOOD_DATA, blockTag: 16 }),
      provider.call({ to: CONTRACT, data: '0x02', blockTag: 16 }),
    ]);
    t.deepEqual(balance, { status: 'fulfilled', value: FAKE_BALANCE });
    const b = (block as PromiseFulfilledResult<Block | null>).value!;
    t.is(b.number, 16);
    t.is(b.hash, `0x${'ab'.repeat(31)}10`);
    const l = (logs as PromiseFulfilledResult<Log[]>).value;
    t.deepEqual(l.map((x) => x.index), [1, 2]);
    t.is(l[0]!.address, getAddress('0x5523d3c98809dddb82c686e152f5c58b1b0fb59e'));
    t.deepEqual(good, { status: 'fulfilled', value: WORD_42 });
    t.is(reverted.status, 'rejected');
    const err = (reverted as PromiseRejectedResult).reason as unknown;
    t.true(isError(err, 'CALL_EXCEPTION'), `a revert in a batch is a CALL_EXCEPTION, got ${String(err)}`);
    if (isError(err, 'CALL_EXCEPTION')) {
      t.is(err.reason, 'nope');
      t.is(err.data, REVERT_DATA);
    }
    t.deepEqual(callCounts(fakes), [6, 5, 0], 'one confirmable batch of 5: each member on 2 upstreams');
    t.deepEqual(calls(fakes), [2, 1, 0], 'as one upstream batch each');
    const members5 = callsOf(fakes[1]!);
    t.deepEqual(members5.map((c) => c.method).sort(), ['eth_call', 'eth_call', 'eth_getBalance', 'eth_getBlockByNumber', 'eth_getLogs']);
    // (Checked before the next call, which a loaded machine's ranking may send to fakes[2].)
    assertFanout(t, fakes, 2);

    // A revert on its own (not in a batch): the same CALL_EXCEPTION, from an agreed answer.
    const alone = await t.throwsAsync(provider.call({ to: CONTRACT, data: '0x03', blockTag: 15 }));
    t.true(isError(alone, 'CALL_EXCEPTION'), `got ${String(alone)}`);
    if (isError(alone, 'CALL_EXCEPTION')) t.is(alone.reason, 'nope');
    // Two upstreams, one call each (which two is the ranking's: on a loaded machine the third may
    // rank above the second for a moment).
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    t.is(sum(callCounts(fakes)), 13);
    t.is(sum(calls(fakes)), 5);
    t.is(callCounts(fakes).filter((n, i) => n > [6, 5, 0][i]!).length, 2, 'on 2 different upstreams');
  } finally {
    provider.destroy();
    await close();
  }
});

test('ethers (default network detection): eth_chainId rides in the batches, which still go to 2 upstreams', async (t) => {
  const { fakes, gw, close } = await fakeSetup();
  const provider = new JsonRpcProvider(`${gw.url}/confirmations/2/rpc/${FAKE_CHAIN}`);
  try {
    t.is((await provider.getNetwork()).chainId, BigInt(FAKE_CHAIN));
    const [balance, block, logs, good] = await Promise.all([
      provider.getBalance(ACCOUNT, 16),
      provider.getBlock(16),
      provider.getLogs({ fromBlock: 15, toBlock: 16 }),
      provider.call({ to: CONTRACT, data: GOOD_DATA, blockTag: 16 }),
    ]);
    t.is(balance, FAKE_BALANCE);
    t.is(block!.number, 16);
    t.is(logs.length, 2);
    t.is(good, WORD_42);
    // eth_chainId does not spoil a batch of pinned reads: ethers batches it with them, and it is
    // then checked by 2 upstreams like them (each member goes upstream on its own).
    const chainIds = callsOf(fakes[1]!).filter((c) => c.method === 'eth_chainId');
    t.true(chainIds.length >= 1, `eth_chainId beside pinned calls reached the second upstream: ${JSON.stringify(callsOf(fakes[1]!))}`);
    assertFanout(t, fakes, 2);
    t.is(fakes[2]!.calls, 0);
  } finally {
    provider.destroy();
    await close();
  }
});

// ---------------------------------------------------------------------------------------------
// viem over fake upstreams
// ---------------------------------------------------------------------------------------------

const viemClient = (url: string, batch = false): PublicClient =>
  createPublicClient({ transport: http(url, { batch, retryCount: 0 }), cacheTime: 0 }) as PublicClient;

async function viemReads(client: PublicClient) {
  return {
    blockNumber: await client.getBlockNumber(),
    balance: await client.getBalance({ address: ACCOUNT, blockNumber: 16n }),
    block: await client.getBlock({ blockNumber: 16n }),
    call: await client.call({ to: CONTRACT, data: GOOD_DATA, blockNumber: 16n }),
    logs: await client.getLogs({ fromBlock: 15n, toBlock: 16n }),
  };
}

function checkViemReads(t: ExecutionContext, r: Awaited<ReturnType<typeof viemReads>>): void {
  t.is(r.blockNumber, 16n);
  t.is(r.balance, FAKE_BALANCE);
  t.is(r.block.number, 16n);
  t.is(r.block.hash, `0x${'ab'.repeat(31)}10`);
  t.deepEqual(r.call, { data: WORD_42 });
  t.deepEqual(r.logs.map((l) => l.logIndex), [1, 2]);
}

async function viemRevert(t: ExecutionContext, client: PublicClient, data: Hex): Promise<void> {
  const err = await t.throwsAsync(client.call({ to: CONTRACT, data, blockNumber: 16n }));
  t.true(err instanceof CallExecutionError, `a revert is a CallExecutionError, got ${err?.name}: ${err?.message}`);
  t.false(err instanceof HttpRequestError);
  const reverted = (err as BaseError).walk((e) => e instanceof ExecutionRevertedError);
  t.true(reverted instanceof ExecutionRevertedError, 'the cause is the node revert');
}

test('viem over /rpc/<id> (N=1): results, a revert as CallExecutionError, 1 upstream per call', async (t) => {
  const { fakes, gw, close } = await fakeSetup();
  try {
    const client = viemClient(`${gw.url}/rpc/${FAKE_CHAIN}`);
    checkViemReads(t, await viemReads(client));
    await viemRevert(t, client, '0x02');
    // N=1 spreads over the upstreams (strategy balanced): each call reaches exactly one of them.
    const seen = fakes.flatMap((f) => f.requests.map((r) => JSON.stringify(r.body)));
    t.is(seen.length, 6, `calls per upstream: ${calls(fakes).join(', ')}`);
    t.is(new Set(seen).size, 6, 'no call reached two upstreams');
  } finally {
    await close();
  }
});

test('viem over /confirmations/3/rpc/<id>: pinned calls reach 3 upstreams, eth_blockNumber 1', async (t) => {
  const { fakes, gw, close } = await fakeSetup(4);
  try {
    const client = viemClient(`${gw.url}/confirmations/3/rpc/${FAKE_CHAIN}`);
    checkViemReads(t, await viemReads(client));
    await viemRevert(t, client, '0x02');
    t.deepEqual(calls(fakes), [6, 5, 5, 0]);
    assertFanout(t, fakes, 3);
  } finally {
    await close();
  }
});

test('viem with batch: true over /confirmations/2/rpc/<id>: a pinned batch reaches 2 upstreams, a mixed one 1', async (t) => {
  const { fakes, gw, close } = await fakeSetup();
  try {
    const client = viemClient(`${gw.url}/confirmations/2/rpc/${FAKE_CHAIN}`, true);
    const [balance, block, call, logs, reverted] = await Promise.allSettled([
      client.getBalance({ address: ACCOUNT, blockNumber: 16n }),
      client.getBlock({ blockNumber: 16n }),
      client.call({ to: CONTRACT, data: GOOD_DATA, blockNumber: 16n }),
      client.getLogs({ fromBlock: 15n, toBlock: 16n }),
      client.call({ to: CONTRACT, data: '0x02', blockNumber: 16n }),
    ]);
    t.deepEqual(balance, { status: 'fulfilled', value: FAKE_BALANCE });
    t.is(block.status === 'fulfilled' && block.value.number, 16n);
    t.deepEqual(call, { status: 'fulfilled', value: { data: WORD_42 } });
    t.is(logs.status === 'fulfilled' && logs.value.length, 2);
    t.is(reverted.status, 'rejected');
    t.true((reverted as PromiseRejectedResult).reason instanceof CallExecutionError);
    t.deepEqual(callCounts(fakes), [5, 5, 0], 'one batch of 5, all pinned: each member on 2 upstreams');
    t.deepEqual(calls(fakes), [1, 1, 0], 'as one upstream batch each');
    assertFanout(t, fakes, 2);

    // A mixed batch, each member on its own: eth_blockNumber goes to 1 upstream, the pinned
    // balance to 2. Which upstream the N=1 member asks is the balanced strategy's pick (the least
    // loaded of the best tier: a heads probe in flight, or a loaded machine's ranking, moves it),
    // so what is asserted is what the design guarantees whatever the pick: 3 calls in all, the
    // balance on 2 different upstreams with the same body, eth_blockNumber on 1, and the batch's
    // calls to one upstream sent as one upstream request.
    const callsBefore = callCounts(fakes);
    const requestsBefore = calls(fakes);
    const [n, b2] = await Promise.all([client.getBlockNumber(), client.getBalance({ address: ACCOUNT, blockNumber: 15n })]);
    t.is(n, 16n);
    t.is(b2, FAKE_BALANCE);
    const added = fakes.map((f, i) => callsOf(f).slice(callsBefore[i]));
    t.is(added.flat().length, 3, `calls per upstream: ${callCounts(fakes).join(', ')}`);
    t.is(added.filter((c) => c.some((x) => x.method === 'eth_blockNumber')).length, 1, 'eth_blockNumber on 1 upstream');
    const balances = added.flatMap((c) => c.filter((x) => x.method === 'eth_getBalance'));
    t.is(balances.length, 2);
    t.is(added.filter((c) => c.some((x) => x.method === 'eth_getBalance')).length, 2, 'the pinned balance on 2 different upstreams');
    t.is(JSON.stringify(balances[0]), JSON.stringify(balances[1]), 'the same call to both');
    t.deepEqual(
      calls(fakes).map((r, i) => r - requestsBefore[i]!),
      added.map((c) => (c.length > 0 ? 1 : 0)),
      'one upstream request per upstream reached: eth_blockNumber rides with the balance where they meet',
    );
  } finally {
    await close();
  }
});

// ---------------------------------------------------------------------------------------------
// Real local nodes: 4 anvils with identical blocks 0-3; at block 4 the last one diverges (it
// mined one extra transaction the others never saw).
// ---------------------------------------------------------------------------------------------

const ANVIL_CHAIN = 4242;

interface Anvils {
  cluster: AnvilCluster;
  seed: SeededChain;
  honest: AnvilNode[];
  divergent: AnvilNode;
  /** Block 4 hash on the honest nodes and on the divergent one. */
  block4: { honest: string; divergent: string };
  /** rpcs = 3 honest nodes, confirmations 3. */
  same: Gateway;
  /** rpcs = [divergent, 3 honest], confirmations 3. */
  majority: Gateway;
  /** rpcs = [honest, divergent, honest], confirmations 3. */
  split: Gateway;
}

let anvils: Promise<Anvils> | undefined;
const gateways: Gateway[] = [];

function getAnvils(): Promise<Anvils> {
  anvils ??= (async () => {
    const cluster = await startAnvils(4, { chainId: ANVIL_CHAIN });
    const seed = await seedChain(cluster);
    const honest = cluster.nodes.slice(0, 3);
    const divergent = cluster.nodes[3]!;
    const extra = await signTx(anvilWallet(2), { chainId: ANVIL_CHAIN, nonce: 0, to: seed.recipient, value: 250_000_000_000_000_000n, gasLimit: 21_000n });
    const [h, d] = await Promise.all([cluster.mineSame([], seed.timestampOf(4), honest), cluster.mineSame([extra], seed.timestampOf(4), [divergent])]);
    const gw = async (rpcs: string[]) => {
      const g = await startGateway({ chains: { [ANVIL_CHAIN]: { rpcs, confirmations: 3 } } });
      gateways.push(g);
      return g;
    };
    return {
      cluster,
      seed,
      honest,
      divergent,
      block4: { honest: h.hash, divergent: d.hash },
      same: await gw(honest.map((n) => n.url)),
      majority: await gw([divergent.url, ...honest.map((n) => n.url)]),
      split: await gw([honest[0]!.url, divergent.url, honest[1]!.url]),
    };
  })();
  return anvils;
}

test.after.always(async () => {
  await Promise.all(gateways.map((g) => g.close()));
  await stopAllAnvils();
});

const hex = (n: number | bigint) => `0x${n.toString(16)}`;

function assertConfirmed(t: ExecutionContext, r: Reply, urls: string[], n: number, what: string): void {
  t.is(r.status, 200, `${what}: ${r.text.slice(0, 300)}`);
  t.is(r.headers['x-confirmable'], 'true', what);
  t.is(r.headers['x-required-confirmations'], String(n), what);
  const checked = String(r.headers['x-checked-urls']).split(',');
  t.deepEqual([...checked].sort(), [...urls].sort(), `${what}: X-Checked-URLS`);
  // (a batch: each member's forwarding upstream, comma-separated)
  for (const u of String(r.headers['x-forwarded-from']).split(',')) t.true(checked.includes(u), `${what}: X-Forwarded-From is one of the checked`);
}

test('anvil: pinned reads through /rpc/<id> are confirmed by the 3 nodes and equal one node answered directly', async (t) => {
  const { same, honest, seed } = await getAnvils();
  const urls = honest.map((n) => n.url);
  const reads: [string, unknown[]][] = [
    ['eth_getBlockByNumber', [hex(seed.deployBlock), true]],
    ['eth_getBlockByNumber', [hex(seed.transferBlock), false]],
    ['eth_getBlockTransactionCountByNumber', [hex(seed.deployBlock)]],
    ['eth_getBalance', [seed.recipient, hex(seed.transferBlock)]],
    ['eth_getBalance', [seed.recipient, { blockNumber: hex(seed.deployBlock) }]],
    ['eth_getTransactionCount', [seed.deployer, hex(seed.transferBlock)]],
    ['eth_getCode', [seed.contract, hex(seed.deployBlock)]],
    ['eth_getStorageAt', [seed.contract, '0x0', hex(seed.deployBlock)]],
    ['eth_call', [{ to: seed.contract, data: '0x01' }, hex(seed.deployBlock)]],
    ['eth_call', [{ to: seed.contract, data: '0x' }, hex(seed.deployBlock)]],
    ['eth_getLogs', [{ fromBlock: '0x0', toBlock: hex(seed.emptyBlock) }]],
  ];
  for (const [method, params] of reads) {
    const what = `${method} ${JSON.stringify(params)}`;
    const [r, direct] = await Promise.all([same.post(`/rpc/${ANVIL_CHAIN}`, rpc(method, params, 7)), honest[0]!.request(method, params)]);
    assertConfirmed(t, r, urls, 3, what);
    t.is(r.body.id, 7);
    if (direct.error) t.deepEqual({ code: r.body.error?.code, data: r.body.error?.data }, { code: direct.error.code, data: direct.error.data }, what);
    else t.deepEqual(r.body.result, direct.result, what);
  }
  // A batch of pinned reads is confirmable as a whole.
  const batch = [rpc('eth_getBalance', [seed.recipient, '0x2'], 1), rpc('eth_getCode', [seed.contract, '0x1'], 2)];
  assertConfirmed(t, await same.post(`/confirmations/2/rpc/${ANVIL_CHAIN}`, batch), urls.slice(0, 2), 2, 'batch via /confirmations/2');
  // Not pinned: one node, X-Confirmable false.
  for (const [method, params] of [
    ['eth_blockNumber', []],
    ['eth_getBalance', [seed.recipient, 'latest']],
    ['eth_getBalance', [seed.recipient]],
  ] as [string, unknown[]][]) {
    const r = await same.post(`/rpc/${ANVIL_CHAIN}`, rpc(method, params));
    t.is(r.status, 200);
    t.is(r.headers['x-confirmable'], 'false', method);
    t.is(r.headers['x-required-confirmations'], '1', method);
    t.is(String(r.headers['x-checked-urls']).split(',').length, 1, method);
  }
});

test('anvil: ethers through the gateway reads what ethers reads from one node directly', async (t) => {
  const { same, honest, seed } = await getAnvils();
  const viaGateway = new JsonRpcProvider(`${same.url}/rpc/${ANVIL_CHAIN}`, ANVIL_CHAIN, { staticNetwork: true });
  const direct = new JsonRpcProvider(honest[0]!.url, ANVIL_CHAIN, { staticNetwork: true });
  const reads = async (p: JsonRpcProvider) => {
    const [block, emptyBlock, balance, before, nonce, code, storage, call, logs] = await Promise.all([
      p.getBlock(seed.deployBlock, true),
      p.getBlock(seed.emptyBlock),
      p.getBalance(seed.recipient, seed.transferBlock),
      p.getBalance(seed.recipient, seed.deployBlock),
      p.getTransactionCount(seed.deployer, seed.transferBlock),
      p.getCode(seed.contract, seed.deployBlock),
      p.getStorage(seed.contract, 0, seed.deployBlock),
      p.call({ to: seed.contract, data: '0x01', blockTag: seed.deployBlock }),
      p.getLogs({ fromBlock: 0, toBlock: seed.emptyBlock }),
    ]);
    return { block: block!.toJSON(), emptyBlock: emptyBlock!.toJSON(), balance, before, nonce, code, storage, call, logs: logs.map((l) => l.toJSON()) };
  };
  try {
    const [got, expected] = await Promise.all([reads(viaGateway), reads(direct)]);
    t.deepEqual(got, expected);
    t.is(got.balance, seed.transferValue);
    t.is(got.before, 0n);
    t.is(got.nonce, 2);
    t.is(got.code, '0x361560105760005460005260206000f35b60006000fd');
    t.is(BigInt(got.storage), 42n);
    t.is(BigInt(got.call), 42n);
    t.is(got.logs.length, 1);
    t.is(got.logs[0].address, seed.contract);
    t.is(got.block.transactions.length, 1);
    const err = await t.throwsAsync(viaGateway.call({ to: seed.contract, data: '0x', blockTag: seed.deployBlock }));
    t.true(isError(err, 'CALL_EXCEPTION'), `a revert agreed by 3 nodes is a CALL_EXCEPTION, got ${String(err)}`);
  } finally {
    viaGateway.destroy();
    direct.destroy();
  }
});

test('anvil: viem (plain and batch) through /confirmations/3/rpc/<id> reads what viem reads from one node directly', async (t) => {
  const { same, honest, seed } = await getAnvils();
  const reads = async (c: PublicClient) => {
    const [block, balance, nonce, code, storage, call, logs] = await Promise.all([
      c.getBlock({ blockNumber: BigInt(seed.deployBlock), includeTransactions: true }),
      c.getBalance({ address: seed.recipient as Hex, blockNumber: BigInt(seed.transferBlock) }),
      c.getTransactionCount({ address: seed.deployer as Hex, blockNumber: BigInt(seed.transferBlock) }),
      c.getCode({ address: seed.contract as Hex, blockNumber: BigInt(seed.deployBlock) }),
      c.getStorageAt({ address: seed.contract as Hex, slot: '0x0', blockNumber: BigInt(seed.deployBlock) }),
      c.call({ to: seed.contract as Hex, data: '0x01', blockNumber: BigInt(seed.deployBlock) }),
      c.getLogs({ fromBlock: 0n, toBlock: BigInt(seed.emptyBlock) }),
    ]);
    return { block, balance, nonce, code, storage, call, logs };
  };
  const expected = await reads(viemClient(honest[0]!.url));
  for (const batch of [false, true]) {
    const got = await reads(viemClient(`${same.url}/confirmations/3/rpc/${ANVIL_CHAIN}`, batch));
    t.deepEqual(got, expected, `batch: ${batch}`);
  }
  t.is(expected.balance, seed.transferValue);
  t.is(expected.nonce, 2);
  t.is(expected.code, '0x361560105760005460005260206000f35b60006000fd');
  t.is(BigInt(expected.storage!), 42n);
  t.is(BigInt(expected.call.data!), 42n);
  t.is(expected.logs.length, 1);
  await viemRevertOnAnvil(t, viemClient(`${same.url}/confirmations/3/rpc/${ANVIL_CHAIN}`), seed);
});

async function viemRevertOnAnvil(t: ExecutionContext, client: PublicClient, seed: SeededChain): Promise<void> {
  const err = await t.throwsAsync(client.call({ to: seed.contract as Hex, data: '0x', blockNumber: BigInt(seed.deployBlock) }));
  t.true(err instanceof CallExecutionError, `got ${err?.name}: ${err?.message}`);
}

test('anvil: eth_sendRawTransaction goes to exactly 1 node (X-Required-Confirmations 1), from raw, ethers and viem', async (t) => {
  const { same, honest } = await getAnvils();
  const sender = anvilWallet(1);
  const sign = (nonce: number) => signTx(sender, { chainId: ANVIL_CHAIN, nonce, to: '0x000000000000000000000000000000000000dEaD', value: 1n, gasLimit: 21_000n });
  const [raw0, raw1, raw2] = [await sign(0), await sign(1), await sign(2)];
  const hashes = [raw0, raw1, raw2].map((raw) => Transaction.from(raw).hash!);
  const [hash0, hash1, hash2] = hashes as [string, string, string];

  const r = await same.post(`/confirmations/3/rpc/${ANVIL_CHAIN}`, rpc('eth_sendRawTransaction', [raw0]));
  t.is(r.status, 200, r.text);
  t.is(r.body.result, hash0);
  t.is(r.headers['x-confirmable'], 'false');
  t.is(r.headers['x-required-confirmations'], '1');
  const urls = honest.map((n) => n.url);
  t.true(urls.includes(String(r.headers['x-forwarded-from'])), 'one of the nodes');
  t.is(r.headers['x-checked-urls'], r.headers['x-forwarded-from'], 'that node only');

  const provider = new JsonRpcProvider(`${same.url}/rpc/${ANVIL_CHAIN}`, ANVIL_CHAIN, { staticNetwork: true });
  try {
    const sent = await provider.broadcastTransaction(raw1);
    t.is(sent.hash, hash1);
  } finally {
    provider.destroy();
  }
  t.is(await viemClient(`${same.url}/rpc/${ANVIL_CHAIN}`).sendRawTransaction({ serializedTransaction: raw2 as Hex }), hash2 as Hex);

  // Each is in the pool of exactly one node (N=1 spreads over the nodes); the first in the one the headers named.
  const found = await Promise.all(honest.map((node) => Promise.all(hashes.map((h) => node.rpc('eth_getTransactionByHash', [h])))));
  for (const [k, hash] of hashes.entries()) {
    const holders = honest.filter((_, i) => found[i]![k] !== null).map((n) => n.url);
    t.is(holders.length, 1, `${hash} is in ${holders.length} pools`);
    if (k === 0) t.deepEqual(holders, [r.headers['x-forwarded-from']]);
  }
});

test('anvil: N=3 over 4 nodes with one divergent: the majority answer, never the divergent one', async (t) => {
  const { majority, honest, divergent, seed, block4 } = await getAnvils();
  t.not(block4.honest, block4.divergent);
  const urls = honest.map((n) => n.url);
  const balance4 = rpc('eth_getBalance', [seed.recipient, '0x4']);
  const [r, honestAnswer, divergentAnswer] = await Promise.all([
    majority.post(`/rpc/${ANVIL_CHAIN}`, balance4),
    honest[0]!.request('eth_getBalance', balance4.params),
    divergent.request('eth_getBalance', balance4.params),
  ]);
  t.not(honestAnswer.result, divergentAnswer.result);
  assertConfirmed(t, r, urls, 3, 'balance at block 4');
  t.is(r.body.result, honestAnswer.result);
  t.false(String(r.headers['x-checked-urls']).includes(divergent.url));
  t.not(r.headers['x-forwarded-from'], divergent.url);

  const b = await majority.post(`/rpc/${ANVIL_CHAIN}`, rpc('eth_getBlockByNumber', ['0x4', false]));
  assertConfirmed(t, b, urls, 3, 'block 4');
  t.is(b.body.result.hash, block4.honest);

  const provider = new JsonRpcProvider(`${majority.url}/rpc/${ANVIL_CHAIN}`, ANVIL_CHAIN, { staticNetwork: true });
  try {
    const [balance, block] = await Promise.all([provider.getBalance(seed.recipient, 4), provider.getBlock(4)]);
    t.is(balance, seed.transferValue);
    t.is(block!.hash, block4.honest);
  } finally {
    provider.destroy();
  }
  const client = viemClient(`${majority.url}/rpc/${ANVIL_CHAIN}`);
  t.is(await client.getBalance({ address: seed.recipient as Hex, blockNumber: 4n }), seed.transferValue);
  t.is((await client.getBlock({ blockNumber: 4n })).hash, block4.honest as Hex);
});

test('anvil: N=3 over 3 nodes with one divergent: 502 -32010, and ethers and viem surface an error', async (t) => {
  const { split, divergent, seed } = await getAnvils();
  const r = await split.post(`/rpc/${ANVIL_CHAIN}`, rpc('eth_getBalance', [seed.recipient, '0x4'], 9));
  t.is(r.status, 502, r.text);
  t.is(r.headers['content-type'], 'application/json');
  t.is(r.body.id, 9);
  t.is(r.body.error.code, -32010);
  t.is(r.body.error.data.required, 3);
  // Two groups: the divergent node alone, and the honest answer (1 or 2 nodes, depending on
  // arrival order: once a disagreement makes 3 equal answers impossible the gateway stops).
  const groups = r.body.error.data.groups as { hash: string; upstreams: string[] }[];
  t.is(groups.length, 2);
  for (const g of groups) t.regex(g.hash, /^[0-9a-f]{64}$/);
  const isDivergent = (u: string) => u.includes(`127.0.0.1:${divergent.port}`);
  const lone = groups.filter((g) => g.upstreams.some(isDivergent));
  t.is(lone.length, 1);
  t.deepEqual(lone[0]!.upstreams.length, 1);
  t.is(r.body.result, undefined);

  const provider = new JsonRpcProvider(`${split.url}/rpc/${ANVIL_CHAIN}`, ANVIL_CHAIN, { staticNetwork: true });
  try {
    const err = await t.throwsAsync(provider.getBalance(seed.recipient, 4));
    t.true(isError(err, 'SERVER_ERROR'), `got ${String(err)}`);
    if (isError(err, 'SERVER_ERROR')) t.regex(String(err.info?.responseBody), /-32010/);
    // Before the divergence the same three nodes agree.
    t.is(await provider.getBalance(seed.recipient, 2), seed.transferValue);
  } finally {
    provider.destroy();
  }
  const client = viemClient(`${split.url}/rpc/${ANVIL_CHAIN}`);
  const verr = await t.throwsAsync(client.getBalance({ address: seed.recipient as Hex, blockNumber: 4n }));
  // viem reads the JSON-RPC error out of the 502 body: the gateway's code reaches the caller.
  t.true(verr instanceof BaseError, `got ${String(verr)}`);
  const rpcError = (verr as BaseError).walk((e) => e instanceof RpcRequestError);
  t.true(rpcError instanceof RpcRequestError, `got ${verr?.name}: ${verr?.message}`);
  if (rpcError instanceof RpcRequestError) {
    t.is(rpcError.code, -32010);
    t.regex(rpcError.message, /Status: 502/);
    t.regex(rpcError.message, /No quorum/);
  }
});
