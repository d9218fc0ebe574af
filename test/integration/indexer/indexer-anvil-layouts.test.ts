/**
 * End to end from real contracts to both table layouts: FastBridgeV2 (the compiled contract of
 * test/fixtures/fastbridge/) deployed on two anvil chains, driven through every state the
 * contract allows (requested, then left unrelayed while both chains' clocks move 8 days forward,
 * past the 7-day missing-relay window; requested and left past its on-chain deadline; requested
 * with a deadline days ahead; relayed; proven; claimed; proven then disputed
 * by a guard; refunded; relayed then refunded; proven by another prover than the relayer), plus a
 * relay on the destination of a request the origin chain never saw bridged (an invalid relay).
 * Every list is thus non-empty. The events are
 * written, as the RFQ indexer writes them, into the Ponder 0.4–0.6 tables (search path) and
 * copied into the Ponder 0.7+ layout (schema `rfq`, read through the views of `rfq_views`, with
 * Ponder's `_ponder_checkpoint`). Both APIs answer the same lists, stats and status; then a
 * redeploy of each (tables dropped and re-created) is followed by the indexes coming back.
 */
import test from 'ava';
import { createPublicClient, createWalletClient, encodeFunctionData, encodePacked, http, keccak256, parseEventLogs, toFunctionSelector, toHex, type Address, type Hex, type Log } from 'viem';
import { mnemonicToAccount, type HDAccount } from 'viem/accounts';
import { indexerApi } from '../../../lib/indexer/api.js';
import { chainById } from '../../../lib/indexer/chains.js';
import { REQUIRED_INDEXES, watchIndexes } from '../../../lib/indexer/db/indexes.js';
import { LayoutResolver, TABLES } from '../../../lib/indexer/db/layout.js';
import type { Stage, StatsSnapshot, StatusSnapshot } from '../../../lib/indexer/ops/stats.js';
import { WINDOW_DEFAULTS } from '../../../lib/indexer/read/queries.js';
import { formatUnits, insertRows, type DemoRow } from '../../../lib/indexer/seed.js';
import { anvilMnemonic, startAnvils, stopAllAnvils } from '../../support/anvil.js';
import { deployFastBridge, fastBridgeArtifact } from '../../support/fastbridge.js';
import { startTestDatabase, type TestDatabase } from '../../support/pg.js';
import { copyIntoNewLayout } from '../../fixtures/indexer/ponder/ponder-new.js';
import { get, serve, type Running } from '../../fixtures/indexer/server.js';

const { abi } = fastBridgeArtifact('FastBridgeV2');
const NATIVE = '0xEeeeeEeeeEeEeeEeEeEeeEEEeeeeEeeeeeeeEEeE' as Address;
const ORIGIN = 42161;
const DEST = 8453;
const GENESIS = 1_700_000_000;
const account = (i: number): HDAccount => mnemonicToAccount(anvilMnemonic, { addressIndex: i });
const [ADMIN, RELAYER, GUARD, PROVER2] = [account(0), account(1), account(2), account(3)];

/**
 * The bridges and the state each is driven to, in the order they are requested. `stale` comes
 * first: once it is requested both chains' clocks move STALE_SECONDS forward, so it alone is
 * older than the missing-relay window when the API reads the tables.
 */
const BRIDGES = ['stale', 'expired', 'requested', 'relayed', 'proven', 'claimed', 'disputed', 'refunded', 'relayedRefunded', 'otherProver'] as const;
type Name = (typeof BRIDGES)[number];
/** A bridge, or the relay of a request the origin never emitted. */
type Id = Name | 'invalidRelay';
/** The missing-relay window (7 days) plus one day. */
const STALE_SECONDS = WINDOW_DEFAULTS.missingRelayWindowSeconds + 86_400;
/** The events a bridge can have; `at[id][phase]` is the timestamp of the block that emitted it. */
type Phase = 'request' | 'relay' | 'proof' | 'dispute' | 'claim' | 'refund';

interface Chain {
  id: number;
  url: string;
  bridge: Address;
  client: ReturnType<typeof createPublicClient>;
  /** One JSON-RPC call to the node (e.g. anvil's clock methods). */
  rpc(method: string, params?: unknown[]): Promise<unknown>;
  /** Sends one contract call from `from` and waits for its receipt (automine); `timestamp` is its block's. */
  call(from: HDAccount, functionName: string, args: unknown[], value?: bigint): Promise<{ hash: Hex; blockNumber: bigint; timestamp: number; logs: Log[] }>;
}

let pg: TestDatabase;
let origin: Chain;
let dest: Chain;
const tx = {} as Record<Id, Hex>;
/** When each event of each bridge was emitted (block timestamps read from the chains). */
const at = Object.fromEntries([...BRIDGES, 'invalidRelay'].map((n) => [n, {}])) as Record<Id, Partial<Record<Phase, number>>>;
/** The relay of the request the origin never emitted: its transaction, block and request bytes. */
let invalid: { hash: Hex; blockNumber: bigint; request: Hex; destAmount: bigint };
const apps: { old?: Running; new?: Running } = {};
/** Newest block of each chain once everything is done, and the API's clock. */
let heads: Record<number, { number: bigint; timestamp: number }>;
let NOW: number;

async function chainOn(id: number): Promise<Chain> {
  const cluster = await startAnvils(1, { chainId: id, timestamp: GENESIS });
  const node = cluster.nodes[0]!;
  const url = node.url;
  await node.rpc('evm_setAutomine', [true]); // the helper starts nodes that mine on request only
  const bridge = await deployFastBridge(url, ADMIN);
  // Automine mines each transaction at once: poll for its receipt every 50 ms, not viem's 4 s.
  const client = createPublicClient({ transport: http(url), pollingInterval: 50 });
  return {
    id, url, bridge, client,
    rpc: (method, params) => node.rpc(method, params),
    async call(from, functionName, args, value) {
      const wallet = createWalletClient({ account: from, transport: http(url) });
      const hash = await wallet.writeContract({ address: bridge, abi, functionName, args, chain: null, ...(value === undefined ? {} : { value }) } as never);
      const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 50 });
      if (receipt.status !== 'success') throw new Error(`${functionName} reverted on chain ${id}`);
      const { timestamp } = await client.getBlock({ blockNumber: receipt.blockNumber });
      return { hash, blockNumber: receipt.blockNumber, timestamp: Number(timestamp), logs: receipt.logs };
    },
  };
}

/** A Ponder checkpoint string (75 digits): timestamp, chain id, block number, then the position in the block. */
const checkpoint = (timestamp: number, chainId: number, block: bigint) =>
  `${String(timestamp).padStart(10, '0')}${String(chainId).padStart(16, '0')}${block.toString().padStart(16, '0')}${'9'.repeat(16)}9${'9'.repeat(16)}`;

/** The rows the RFQ indexer writes for the bridge events of one chain (Ponder 0.4 spelling). */
async function rowsOf(chain: Chain): Promise<Record<string, DemoRow[]>> {
  const logs = parseEventLogs({ abi, logs: await chain.client.getLogs({ address: chain.bridge, fromBlock: 0n }) });
  const times = new Map<bigint, number>();
  const out: Record<string, DemoRow[]> = Object.fromEntries(Object.values(TABLES).map((t) => [t, []]));
  const name = (id: number) => chainById(id)?.name ?? String(id);
  for (const log of logs) {
    if (!times.has(log.blockNumber)) times.set(log.blockNumber, Number((await chain.client.getBlock({ blockNumber: log.blockNumber })).timestamp));
    const a = log.args as Record<string, unknown> & { transactionId: Hex };
    const event = {
      id: a.transactionId, transactionId: a.transactionId, blockNumber: log.blockNumber.toString(), blockTimestamp: times.get(log.blockNumber)!,
      transactionHash: log.transactionHash,
    };
    const onOrigin = { ...event, originChainId: chain.id, originChain: name(chain.id) };
    const amounts = (o: bigint, d: bigint) => ({
      originAmount: o.toString(), originAmountFormatted: formatUnits(o, 18), destAmount: d.toString(), destAmountFormatted: formatUnits(d, 18),
    });
    switch (log.eventName) {
      case 'BridgeRequested':
        out[TABLES.request]!.push({
          ...onOrigin, sender: a.sender as string, request: a.request as string, originToken: a.originToken as string, destToken: a.destToken as string,
          ...amounts(a.originAmount as bigint, a.destAmount as bigint), destChainId: Number(a.destChainId), destChain: name(Number(a.destChainId)),
          sendChainGas: a.sendChainGas ? 1 : 0,
        });
        break;
      case 'BridgeRelayed':
        out[TABLES.relay]!.push({
          ...event, relayer: a.relayer as string, to: a.to as string, originToken: a.originToken as string, destToken: a.destToken as string,
          ...amounts(a.originAmount as bigint, a.destAmount as bigint), originChainId: Number(a.originChainId), originChain: name(Number(a.originChainId)),
          destChainId: chain.id, destChain: name(chain.id),
        });
        break;
      case 'BridgeProofProvided':
        out[TABLES.proof]!.push({ ...onOrigin, relayer: a.relayer as string });
        break;
      case 'BridgeProofDisputed':
        out[TABLES.dispute]!.push({ ...onOrigin, relayer: a.relayer as string });
        break;
      case 'BridgeDepositClaimed':
        out[TABLES.claim]!.push({ ...onOrigin, relayer: a.relayer as string, to: a.to as string, token: a.token as string, amount: String(a.amount), amountFormatted: formatUnits(a.amount as bigint, 18) });
        break;
      case 'BridgeDepositRefunded':
        out[TABLES.refund]!.push({ ...onOrigin, to: a.to as string, token: a.token as string, amount: String(a.amount), amountFormatted: formatUnits(a.amount as bigint, 18) });
        break;
      default:
    }
  }
  return out;
}

test.before(async () => {
  [origin, dest] = await Promise.all([chainOn(ORIGIN), chainOn(DEST)]);
  pg = await startTestDatabase();

  // Roles on the origin chain: provers, a guard that may dispute and cancel.
  await origin.call(ADMIN, 'addProver', [RELAYER.address]);
  await origin.call(ADMIN, 'addProver', [PROVER2.address]);
  for (const role of ['GUARD_ROLE', 'CANCELER_ROLE']) await origin.call(ADMIN, 'grantRole', [keccak256(toHex(role)), GUARD.address]);

  const requests = {} as Record<Name, Hex>;
  for (const [i, name] of BRIDGES.entries()) {
    const originAmount = 10n ** 17n * BigInt(i + 1);
    const params = {
      dstChainId: DEST, sender: ADMIN.address, to: ADMIN.address, originToken: NATIVE, destToken: NATIVE,
      originAmount, destAmount: originAmount - 10n ** 15n, sendChainGas: false,
      // An hour, the shortest a relayer quotes; `requested` two days: it still waits for its relay at NOW.
      deadline: (await origin.client.getBlock()).timestamp + (name === 'requested' ? 2n * 86_400n : 3600n),
    };
    const sent = await origin.call(ADMIN, 'bridge', [params], originAmount);
    const [requested] = parseEventLogs({ abi, logs: sent.logs, eventName: 'BridgeRequested' });
    const args = requested!.args as unknown as { transactionId: Hex; request: Hex; destAmount: bigint };
    tx[name] = args.transactionId;
    requests[name] = args.request;
    at[name].request = sent.timestamp;
    if (name === 'stale') {
      // Never relayed nor refunded: 8 days later, on both chains (relays keep following their
      // requests in time), it has waited past the missing-relay window. Each clock moves with
      // evm_increaseTime and an empty block, so every later block is that much later.
      for (const c of [origin, dest]) {
        await c.rpc('evm_increaseTime', [STALE_SECONDS]);
        await c.rpc('evm_mine');
      }
      continue;
    }
    if (name === 'requested' || name === 'expired' || name === 'refunded') continue;
    const relay = await dest.call(RELAYER, 'relay', [args.request], args.destAmount);
    at[name].relay = relay.timestamp;
    if (name === 'relayed' || name === 'relayedRefunded') continue;
    at[name].proof = (await origin.call(name === 'otherProver' ? PROVER2 : RELAYER, 'prove', [args.request, relay.hash])).timestamp;
  }
  // The destination accepts the relay of any request naming it: this one (V2 layout,
  // BridgeTransactionV2Lib.encodeV2: tightly packed, no exclusivity, no zap) says it comes from the
  // origin chain with a nonce the origin never reached, so no BridgeRequested has its id.
  const destAmount = 10n ** 16n;
  const request = encodePacked(
    ['uint16', 'uint32', 'uint32', 'address', 'address', 'address', 'address', 'uint256', 'uint256', 'uint256', 'uint256', 'uint256', 'address', 'uint256', 'uint256', 'bytes'],
    [2, ORIGIN, DEST, ADMIN.address, PROVER2.address, NATIVE, NATIVE, destAmount + 10n ** 15n, destAmount, 0n,
      (await dest.client.getBlock()).timestamp + 3600n, 1_000_000n, '0x0000000000000000000000000000000000000000', 0n, 0n, '0x'],
  );
  const forged = await dest.call(RELAYER, 'relay', [request], destAmount);
  tx.invalidRelay = keccak256(request);
  at.invalidRelay.relay = forged.timestamp;
  invalid = { hash: forged.hash, blockNumber: forged.blockNumber, request, destAmount };

  // Within the dispute period a guard disputes one proof; past it (and past the deadlines) the
  // relayer claims one bridge and the guard, a canceler, refunds two never proven.
  at.disputed.dispute = (await origin.call(GUARD, 'dispute', [tx.disputed])).timestamp;
  await origin.rpc('evm_increaseTime', [3700]);
  at.claimed.claim = (await origin.call(RELAYER, 'claimV2', [requests.claimed])).timestamp;
  at.refunded.refund = (await origin.call(GUARD, 'refund', [requests.refunded])).timestamp;
  at.relayedRefunded.refund = (await origin.call(GUARD, 'refund', [requests.relayedRefunded])).timestamp;

  // What the RFQ indexer writes, into the Ponder 0.4 tables, then the same as Ponder 0.7+ writes it.
  const [fromOrigin, fromDest] = await Promise.all([rowsOf(origin), rowsOf(dest)]);
  for (const table of Object.values(TABLES)) await insertRows(pg.db, table, [...fromOrigin[table]!, ...fromDest[table]!]);
  await copyIntoNewLayout(pg.db, 'rfq', 'pascal', 'rfq_views');

  heads = {};
  for (const c of [origin, dest]) {
    const b = await c.client.getBlock();
    heads[c.id] = { number: b.number, timestamp: Number(b.timestamp) };
  }
  NOW = Math.max(...Object.values(heads).map((h) => h.timestamp)) + 60;
  // Ponder's own bookkeeping: 0.4–0.5 one finalized checkpoint per user schema (the origin's
  // block 2), the newest Ponder one row per chain with its latest and finalized checkpoints.
  await pg.db.none(`CREATE SCHEMA ponder; CREATE TABLE ponder.namespace_lock (namespace text PRIMARY KEY, is_locked integer NOT NULL,
    heartbeat_at bigint NOT NULL, build_id text NOT NULL, finalized_checkpoint varchar(75) NOT NULL, schema jsonb NOT NULL)`);
  const block2 = await origin.client.getBlock({ blockNumber: 2n });
  await pg.db.none("INSERT INTO ponder.namespace_lock VALUES ('public', 1, 0, 'b', $1, '{}')", [checkpoint(Number(block2.timestamp), ORIGIN, 2n)]);
  for (const c of [origin, dest]) {
    const h = heads[c.id]!;
    await pg.db.none('INSERT INTO rfq."_ponder_checkpoint" VALUES ($1, $2, $3, $4, $5)', [chainById(c.id)!.name, c.id,
      checkpoint(h.timestamp - 10, c.id, h.number - 1n), checkpoint(h.timestamp, c.id, h.number), checkpoint(h.timestamp - 20, c.id, h.number - 2n)]);
  }
  apps.old = await serve(indexerApi(pg.db, { now: () => NOW, statsMaxAgeSeconds: 0 }));
  apps.new = await serve(indexerApi(pg.db, { now: () => NOW, statsMaxAgeSeconds: 0, schema: 'rfq_views' }));
});

test.after.always(async () => {
  await Promise.all(Object.values(apps).map((a) => a?.close()));
  await pg?.close();
  await stopAllAnvils();
});

/** The expected transactionIds of each list, from the states the bridges were driven to. */
const LISTS: Record<string, Id[]> = {
  '/api/pending-transactions/missing-relay': ['requested'],
  '/api/pending-transactions/exceed-deadline': ['stale', 'expired'], // expired: past its deadline, 1 hour old
  '/api/pending-transactions/missing-proof': ['relayed', 'disputed'], // relayedRefunded: refunded, proving it reverts
  '/api/pending-transactions/missing-claim': ['proven', 'otherProver'],
  '/api/refunded-and-relayed': ['relayedRefunded'],
  '/api/conflicting-proofs': ['otherProver'],
  '/api/disputes': ['disputed'],
  '/api/invalid-relays': ['invalidRelay'],
};
/** The event each list's items age from (and are ordered by). */
const AGED_FROM: Record<string, Phase> = {
  '/api/pending-transactions/missing-relay': 'request',
  '/api/pending-transactions/exceed-deadline': 'request',
  '/api/pending-transactions/missing-proof': 'relay',
  '/api/pending-transactions/missing-claim': 'proof',
  '/api/refunded-and-relayed': 'refund',
  '/api/conflicting-proofs': 'proof',
  '/api/disputes': 'dispute',
  '/api/invalid-relays': 'relay',
};

/** A list item: its id is the bridge's, or the relay's own (invalid-relays). */
type Item = { ageSeconds: number; Bridge?: { transactionId: string }; transactionId?: string };
const idOf = (i: Item) => (i.Bridge?.transactionId ?? i.transactionId)!.toLowerCase();
const ids = (body: unknown) => (body as Item[]).map(idOf).sort();

test.serial('the clock: only the stale request is older than the missing-relay window at NOW; the invalid relay is inside its 14 days', (t) => {
  const cutoff = NOW - WINDOW_DEFAULTS.missingRelayWindowSeconds;
  t.true(at.stale.request! <= cutoff);
  for (const name of BRIDGES.filter((n) => n !== 'stale')) t.true(at[name].request! > cutoff, name);
  t.true(at.invalidRelay.relay! > NOW - WINDOW_DEFAULTS.invalidRelayWindowSeconds);
});

for (const [path, expected] of Object.entries(LISTS)) {
  test.serial(`${path}: the bridges in that state, aged from the chain's timestamps, the same items on both layouts`, async (t) => {
    const [a, b] = await Promise.all([get<Item[]>(`${apps.old!.base}${path}`), get(`${apps.new!.base}${path}`)]);
    t.is(a.status, 200);
    t.is(b.status, 200);
    t.deepEqual(ids(a.body), expected.map((n) => tx[n].toLowerCase()).sort());
    const ageOf = new Map(expected.map((n) => [tx[n].toLowerCase(), NOW - at[n][AGED_FROM[path]!]!]));
    t.deepEqual(a.body.map((i) => i.ageSeconds), a.body.map((i) => ageOf.get(idOf(i))));
    t.deepEqual(b.body, a.body);
  });
}

test.serial('the contract the lists follow: past its deadline a relay reverts (exceed-deadline), until it a relay lands (missing-relay)', async (t) => {
  const [row] = await pg.db.any<{ request: Hex; destAmount: string }>('SELECT "request", "destAmount" FROM "BridgeRequestEvents" WHERE "transactionId" = $1', [tx.expired]);
  const { result } = await dest.client.simulateContract({ address: dest.bridge, abi, functionName: 'getBridgeTransactionV2', args: [row!.request] }) as { result: { deadline: bigint } };
  t.true(Number(result.deadline) < NOW, 'NOW is past the deadline');
  const relayAt = (time: bigint) => dest.client.call({
    account: RELAYER.address, to: dest.bridge, value: BigInt(row!.destAmount), blockOverrides: { time },
    data: encodeFunctionData({ abi, functionName: 'relay', args: [row!.request] }),
  });
  await t.notThrowsAsync(relayAt(result.deadline), 'a relay in a block stamped with the deadline lands');
  const error = await t.throwsAsync(relayAt(result.deadline + 1n));
  t.regex(String((error as { data?: unknown }).data ?? error?.message), new RegExp(toFunctionSelector('DeadlineExceeded()').slice(2)));
});

test.serial('/api/invalid-relays: the relay of the forged request as the destination emitted it, and no bridge to look up', async (t) => {
  const [item] = (await get<Record<string, unknown>[]>(`${apps.old!.base}/api/invalid-relays`)).body;
  t.like(item, {
    ageSeconds: NOW - at.invalidRelay.relay!, transactionId: keccak256(invalid.request), blockNumber: String(invalid.blockNumber),
    blockTimestamp: at.invalidRelay.relay, transactionHash: invalid.hash, originChainId: ORIGIN, destChainId: DEST,
    originChain: chainById(ORIGIN)!.name, destChain: chainById(DEST)!.name, originToken: NATIVE, destToken: NATIVE,
    destAmountFormatted: formatUnits(invalid.destAmount, 18), to: PROVER2.address, relayer: RELAYER.address,
  });
  const lookups = await Promise.all([get(`${apps.old!.base}/api/transaction-id/${tx.invalidRelay}`), get(`${apps.new!.base}/api/transaction-id/${tx.invalidRelay}`)]);
  t.deepEqual(lookups.map((r) => r.status), [404, 404]);
});

test.serial('a bridge\'s lookup carries every event the chains emitted for it, on both layouts', async (t) => {
  const [a, b] = await Promise.all([get<Record<string, unknown>>(`${apps.old!.base}/api/transaction-id/${tx.claimed}`), get(`${apps.new!.base}/api/transaction-id/${tx.claimed}`)]);
  t.is(a.status, 200);
  for (const key of ['Bridge', 'BridgeRequest', 'BridgeRelay', 'BridgeProof', 'BridgeClaim']) t.truthy(a.body[key], key);
  t.like(a.body.BridgeClaim, { relayer: RELAYER.address, to: RELAYER.address });
  t.deepEqual(b.body, a.body);
});

test.serial('/api/stats: per stage the bridges of the lists with their oldest age, the same on both layouts', async (t) => {
  const [a, b] = await Promise.all([get<StatsSnapshot>(`${apps.old!.base}/api/stats`), get<StatsSnapshot>(`${apps.new!.base}/api/stats`)]);
  t.is(a.status, 200);
  t.deepEqual(b.body, a.body);
  t.is(a.body.generatedAt, NOW);
  // Every stage has bridges, all from the origin to the destination: as many as its list, the
  // oldest aged from the chain's timestamp of the event the stage waits after.
  const stages: [Stage, string][] = [['missingRelay', '/api/pending-transactions/missing-relay'], ['exceedDeadline', '/api/pending-transactions/exceed-deadline'],
    ['missingProof', '/api/pending-transactions/missing-proof'], ['missingClaim', '/api/pending-transactions/missing-claim'], ['disputed', '/api/disputes']];
  t.deepEqual(a.body.stages, stages.map(([stage, path]) => ({
    stage, originChainId: ORIGIN, destChainId: DEST, count: LISTS[path]!.length,
    oldestAgeSeconds: NOW - Math.min(...LISTS[path]!.map((n) => at[n][AGED_FROM[path]!]!)),
  })));
  // Oldest ages agree with the lists' items (the same timestamps, the same clock).
  for (const [stage, path] of stages) {
    const items = (await get<{ ageSeconds: number }[]>(`${apps.old!.base}${path}`)).body;
    t.is(a.body.stages.find((s) => s.stage === stage)!.oldestAgeSeconds, Math.max(...items.map((i) => i.ageSeconds)), stage);
  }
  t.true(a.body.stages.find((s) => s.stage === 'exceedDeadline')!.oldestAgeSeconds >= WINDOW_DEFAULTS.missingRelayWindowSeconds);
  t.true(a.body.stages.find((s) => s.stage === 'missingRelay')!.oldestAgeSeconds < WINDOW_DEFAULTS.missingRelayWindowSeconds);
});

test.serial('/api/status: the newest events and Ponder 0.4\'s finalized checkpoint on the old layout, _ponder_checkpoint on the new', async (t) => {
  const [a, b] = await Promise.all([get<StatusSnapshot>(`${apps.old!.base}/api/status`), get<StatusSnapshot>(`${apps.new!.base}/api/status`)]);
  t.is(a.status, 200);
  t.is(b.status, 200);
  // Old layout: the newest bridge event per chain (the origin's last is the refund, the
  // destination's the last relay, the invalid one), finalized up to the origin's block 2 for every chain.
  const events = (await pg.db.any<{ chain: number; block: string; ts: number }>(`SELECT "originChainId" AS chain, max("blockNumber"::numeric)::text AS block, max("blockTimestamp") AS ts
    FROM "BridgeDepositRefundedEvents" GROUP BY 1 UNION ALL SELECT "destChainId", max("blockNumber"::numeric)::text, max("blockTimestamp") FROM "BridgeRelayedEvents" GROUP BY 1 ORDER BY 1`));
  const block2 = await origin.client.getBlock({ blockNumber: 2n });
  t.deepEqual(a.body, {
    generatedAt: NOW, source: 'events',
    chains: events.map((e) => ({
      chainId: e.chain, chain: chainById(e.chain)!.name, latestBlock: e.block, latestTimestamp: e.ts, ageSeconds: NOW - e.ts,
      finalizedBlock: e.chain === ORIGIN ? '2' : null, finalizedTimestamp: Number(block2.timestamp), ready: null,
    })),
  });
  t.deepEqual(b.body, {
    generatedAt: NOW, source: 'ponder_checkpoint',
    chains: [dest, origin].map((c) => {
      const h = heads[c.id]!;
      return {
        chainId: c.id, chain: chainById(c.id)!.name, latestBlock: String(h.number), latestTimestamp: h.timestamp, ageSeconds: NOW - h.timestamp,
        finalizedBlock: String(h.number - 2n), finalizedTimestamp: h.timestamp - 20, ready: null,
      };
    }),
  });
});

test.serial('a redeploy of either layout (tables dropped and re-created) is followed by the indexes coming back, and the same answers', async (t) => {
  const names = async (schema: string) => (await pg.db.any<{ indexname: string }>(
    "SELECT indexname FROM pg_indexes WHERE schemaname = $1 AND indexname LIKE 'omnigate%' AND indexname NOT LIKE '%_pkey' ORDER BY 1", [schema])).map((r) => r.indexname);
  const all = REQUIRED_INDEXES.map((i) => i.name).sort();
  const before = await Promise.all([get(`${apps.old!.base}/api/stats`), get(`${apps.new!.base}/api/pending-transactions/missing-proof`)]);

  const watches = [watchIndexes(pg.db, new LayoutResolver(pg.db), { intervalMs: 3_600_000 }),
    watchIndexes(pg.db, new LayoutResolver(pg.db, { schema: 'rfq_views' }), { intervalMs: 3_600_000 })];
  for (const w of watches) t.teardown(() => w.stop());
  await Promise.all(watches.map((w) => w.start()));
  t.deepEqual(await names('public'), all);
  t.deepEqual(await names('rfq'), all);

  // Ponder 0.4 drops and re-creates all six tables (with its rows, without our indexes)...
  for (const table of Object.values(TABLES)) {
    await pg.db.multi(`ALTER TABLE "${table}" RENAME TO "old_${table}"; CREATE TABLE "${table}" (LIKE "old_${table}" INCLUDING DEFAULTS);
      INSERT INTO "${table}" SELECT * FROM "old_${table}"; DROP TABLE "old_${table}";`);
  }
  // ...and so does the newest Ponder, in its schema and views schema.
  await pg.db.multi('DROP SCHEMA rfq_views CASCADE; DROP SCHEMA rfq CASCADE');
  await copyIntoNewLayout(pg.db, 'rfq', 'pascal', 'rfq_views');
  t.deepEqual(await names('public'), []);
  t.deepEqual(await names('rfq'), []);

  await Promise.all(watches.map((w) => w.check()));
  t.deepEqual(await names('public'), all);
  t.deepEqual(await names('rfq'), all);
  const after = await Promise.all([get(`${apps.old!.base}/api/stats`), get(`${apps.new!.base}/api/pending-transactions/missing-proof`)]);
  t.deepEqual(after.map((r) => r.status), [200, 200]);
  t.deepEqual(after.map((r) => r.body), before.map((r) => r.body));
});
