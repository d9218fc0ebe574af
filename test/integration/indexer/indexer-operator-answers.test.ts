/**
 * The lists operators act on, at their edges: a proof and a dispute in one block, a bridge proven
 * or claimed on the origin chain whose relay is not indexed, refunded bridges, the on-chain
 * deadline in the request bytes and the 7-day cutoff, block times ahead of the server's clock, amounts beyond 2^53, and the lookup's key
 * spellings. Each bridge is in the one list its next action belongs to (or none), the same on
 * REST, GraphQL, `/api/stats` and both table layouts. Its own rows, apart from the shared fixture.
 */
import { createHash } from 'node:crypto';
import test from 'ava';
import { encodeAbiParameters, encodePacked, getAddress, type Hex } from 'viem';
import { indexerApi } from '../../../lib/indexer/api.js';
import { LIST_ROUTES } from '../../../lib/indexer/catalog.js';
import { chainName } from '../../../lib/indexer/chains.js';
import type { ListQueryName } from '../../../lib/indexer/read/queries.js';
import { insertEvents, type DemoRow } from '../../../lib/indexer/seed.js';
import { startTestDatabase, type TestDatabase } from '../../support/pg.js';
import { copyIntoNewLayout } from '../../fixtures/indexer/ponder/ponder-new.js';
import { checkAgainst } from '../../fixtures/indexer/schema-check.js';
import { get, graphql, serve, type Running } from '../../fixtures/indexer/server.js';

const NOW = 1_770_000_000;
const H = 3600;
const D = 24 * H;
const RELAYER = '0xa11ce00000000000000000000000000000000001';
const GUARD = '0x6a4d000000000000000000000000000000000003';
const SENDER = '0x5e4de00000000000000000000000000000000004';
const TOKEN = '0xaf88d065e77c8cc2239327c5edb3a432268e5831';
/** 2^53 + 1 scaled to 18 decimals: no JavaScript number holds it. */
const HUGE = ((2n ** 53n + 1n) * 10n ** 18n).toString();

const id = (label: string) => `0x${createHash('sha256').update(`operator-answers:${label}`).digest('hex')}`;
const hash = (label: string, phase: string) => id(`${label}/${phase}`);
const byId = new Map<string, string>();
const labelsOf = (body: unknown) => (body as { Bridge?: { transactionId: string }; transactionId?: string }[])
  .map((item) => byId.get(item.Bridge?.transactionId ?? item.transactionId ?? '') ?? '?');

const rows = { requests: [] as DemoRow[], relays: [] as DemoRow[], proofs: [] as DemoRow[], disputes: [] as DemoRow[], claims: [] as DemoRow[], refunds: [] as DemoRow[] };
const ORIGIN = 42161;
const DEST = 8453;
/** One block per second on either chain; `block(ts)` is the block of time ts. */
const block = (ts: number) => String(200_000_000 + ts - (NOW - 100 * D));

interface Spec {
  request?: number;
  relay?: number;
  proof?: number;
  /** At the proof's time: in the proof's block. */
  dispute?: number;
  claim?: number;
  refund?: number;
  amount?: string;
  /** The on-chain deadline in the request bytes (v2 layout, or v1 with `v1`); none: bytes of no layout. */
  deadline?: bigint;
  v1?: boolean;
  /** The request's hex digits in upper case (the decoder takes any case). */
  upper?: boolean;
}

/** The `request` bytes FastBridge would emit for a bridge with this deadline (v1 or v2 layout). */
function requestBytes(spec: Spec): Hex {
  if (spec.deadline === undefined) return '0x00';
  const who = getAddress(SENDER);
  const token = getAddress(TOKEN);
  const bytes = spec.v1
    ? encodeAbiParameters(
      [{ type: 'tuple', components: ['uint32', 'uint32', 'address', 'address', 'address', 'address', 'uint256', 'uint256', 'uint256', 'bool', 'uint256', 'uint256'].map((type) => ({ type })) }],
      [[ORIGIN, DEST, who, who, token, token, 100500000n, 100500000n, 0n, false, spec.deadline, 1n] as never])
    : encodePacked(
      ['uint16', 'uint32', 'uint32', 'address', 'address', 'address', 'address', 'uint256', 'uint256', 'uint256', 'uint256', 'uint256', 'address', 'uint256', 'uint256', 'bytes'],
      [2, ORIGIN, DEST, who, who, token, token, 100500000n, 100500000n, 0n, spec.deadline, 1n, getAddress(RELAYER), 0n, 0n, '0x']);
  return spec.upper ? `0x${bytes.slice(2).toUpperCase()}` : bytes;
}

function bridge(label: string, spec: Spec): void {
  const txId = id(label);
  byId.set(txId, label);
  const origin = { originChainId: ORIGIN, originChain: chainName(ORIGIN) };
  const at = (ts: number, phase: string) => ({ blockNumber: block(ts), blockTimestamp: ts, transactionHash: hash(label, phase) });
  const amount = spec.amount ?? '100500000';
  const money = { originToken: TOKEN, destToken: TOKEN, originAmount: amount, originAmountFormatted: '100.5', destAmount: amount, destAmountFormatted: '100.5' };
  if (spec.request !== undefined) {
    rows.requests.push({
      id: txId, transactionId: txId, sender: SENDER, request: requestBytes(spec), ...money, ...origin,
      destChainId: DEST, destChain: chainName(DEST), sendChainGas: 0, ...at(spec.request, 'request'),
    });
  }
  if (spec.relay !== undefined) {
    rows.relays.push({ id: txId, transactionId: txId, relayer: RELAYER, to: SENDER, ...money, ...origin, destChainId: DEST, destChain: chainName(DEST), ...at(spec.relay, 'relay') });
  }
  if (spec.proof !== undefined) rows.proofs.push({ id: txId, transactionId: txId, relayer: RELAYER, ...origin, ...at(spec.proof, 'proof') });
  if (spec.dispute !== undefined) rows.disputes.push({ id: txId, transactionId: txId, relayer: GUARD, ...origin, ...at(spec.dispute, 'dispute') });
  const payout = { token: TOKEN, amount, amountFormatted: '100.5', ...origin };
  if (spec.claim !== undefined) rows.claims.push({ id: txId, transactionId: txId, relayer: RELAYER, to: RELAYER, ...payout, ...at(spec.claim, 'claim') });
  if (spec.refund !== undefined) rows.refunds.push({ id: txId, transactionId: txId, to: SENDER, ...payout, ...at(spec.refund, 'refund') });
}

// A proof and a dispute in one block: the tables keep no order inside a block, and a dispute
// needs a proof before it, so the dispute is the later event: the proof is void.
bridge('same-block-dispute', { request: NOW - 5 * H, relay: NOW - 5 * H + 30, proof: NOW - 5 * H + 600, dispute: NOW - 5 * H + 600 });
// The same, then claimed: the claim says the proof stood (the dispute came first): in no list.
bridge('same-block-claimed', { request: NOW - 8 * H, relay: NOW - 8 * H + 30, proof: NOW - 8 * H + 600, dispute: NOW - 8 * H + 600, claim: NOW - 7 * H });
// Proven (or claimed) on the origin chain, the relay not indexed.
bridge('proven-no-relay', { request: NOW - 3 * H, proof: NOW - 3 * H + 900 });
bridge('claimed-no-relay', { request: NOW - 4 * H, proof: NOW - 4 * H + 900, claim: NOW - 3 * H });
bridge('claimed-no-relay-old', { request: NOW - 9 * D, proof: NOW - 9 * D + 900, claim: NOW - 9 * D + 3 * H });
// Its proof disputed: nothing says it was relayed; it still waits for a relay.
bridge('disputed-no-relay', { request: NOW - 6 * H, proof: NOW - 6 * H + 900, dispute: NOW - 6 * H + 1200 });
// Relayed, then refunded on the origin: proving it reverts; it belongs to refunded-and-relayed only.
bridge('relayed-refunded', { request: NOW - 10 * D, relay: NOW - 10 * D + 60, refund: NOW - 2 * D });
// The cutoff between missing-relay and exceed-deadline, on either side of it.
bridge('at-cutoff', { request: NOW - 7 * D });
bridge('after-cutoff', { request: NOW - 7 * D + 1 });
// A request whose block time is ahead of the server's clock, with an amount beyond 2^53.
bridge('from-the-future', { request: NOW + 90, amount: HUGE });
// The on-chain deadline in the request bytes: once it has passed, `relay` reverts (and the origin
// may refund): exceed-deadline at any age. Until then (equal to now included: a relay may still land
// in a block of this second) missing-relay, however large the uint256; older than 7 days, still
// exceed-deadline. Requests above without a deadline carry bytes of no layout: their age decides.
bridge('past-deadline', { request: NOW - 1 * D, deadline: BigInt(NOW - 1 * D + H) });
bridge('past-deadline-v1', { request: NOW - 2 * H, deadline: BigInt(NOW - 1), v1: true, upper: true });
bridge('within-deadline', { request: NOW - 2 * H - 30, deadline: BigInt(NOW + 1 * D) });
bridge('at-deadline', { request: NOW - 1 * H, deadline: BigInt(NOW), v1: true });
bridge('huge-deadline', { request: NOW - 3 * D, deadline: 2n ** 256n - 1n });
bridge('old-far-deadline', { request: NOW - 8 * D, deadline: BigInt(NOW + 1 * D) });

const EXPECTED: Record<ListQueryName, string[]> = {
  missingRelay: ['from-the-future', 'at-deadline', 'within-deadline', 'disputed-no-relay', 'huge-deadline', 'after-cutoff'],
  exceedDeadline: ['past-deadline-v1', 'past-deadline', 'at-cutoff', 'old-far-deadline'],
  missingProof: ['same-block-dispute'],
  missingClaim: ['proven-no-relay'],
  refundedAndRelayed: ['relayed-refunded'],
  conflictingProofs: [],
  disputes: ['same-block-dispute', 'disputed-no-relay'],
  invalidRelays: [],
};

let pg: TestDatabase;
const apps: Record<'old' | 'new', Running> = {} as never;

test.before(async () => {
  pg = await startTestDatabase();
  await insertEvents(pg.db, rows);
  await copyIntoNewLayout(pg.db, 'rfq', 'pascal', 'rfq_views');
  apps.old = await serve(indexerApi(pg.db, { now: () => NOW }));
  apps.new = await serve(indexerApi(pg.db, { now: () => NOW, schema: 'rfq_views' }));
});

test.after.always(async () => {
  await Promise.all(Object.values(apps).map((a) => a.close()));
  await pg?.close();
});

for (const layout of ['old', 'new'] as const) {
  test(`${layout} layout: each bridge is in the list of its next action, or in none`, async (t) => {
    for (const route of LIST_ROUTES) {
      const res = await get(`${apps[layout].base}${route.paths[0]}`);
      t.is(res.status, 200, route.paths[0]);
      t.deepEqual(labelsOf(res.body), EXPECTED[route.query], route.paths[0]);
    }
  });
}

test('a proof and a dispute in the same block: the proof is void (missing-proof and disputes, not missing-claim)', async (t) => {
  const proof = await get(`${apps.old.base}/api/pending-transactions/missing-proof`);
  t.true(labelsOf(proof.body).includes('same-block-dispute'));
  const claim = await get(`${apps.old.base}/api/pending-transactions/missing-claim`);
  t.false(labelsOf(claim.body).includes('same-block-dispute'));
  const detail = await get<Record<string, { blockNumber: string }>>(`${apps.old.base}/api/transaction-id/${id('same-block-dispute')}`);
  t.is(detail.body.BridgeDispute?.blockNumber, detail.body.BridgeProof?.blockNumber, 'the lookup shows the dispute next to the proof it voids');
});

test('a claimed bridge has no active dispute, even one in its proof\'s block', async (t) => {
  const disputes = await get(`${apps.old.base}/api/disputes`);
  t.false(labelsOf(disputes.body).includes('same-block-claimed'));
  const detail = await get<Record<string, unknown>>(`${apps.new.base}/api/transaction-id/${id('same-block-claimed')}`);
  t.deepEqual(Object.keys(detail.body), ['Bridge', 'BridgeRequest', 'BridgeRelay', 'BridgeProof', 'BridgeClaim']);
});

test('a bridge proven on the origin chain with no relay row waits for its claim, BridgeRelay null, never for a relay', async (t) => {
  const relay = await get(`${apps.old.base}/api/pending-transactions/missing-relay`);
  t.false(labelsOf(relay.body).includes('proven-no-relay'));
  t.false(labelsOf(relay.body).includes('claimed-no-relay'));
  const stale = await get(`${apps.old.base}/api/pending-transactions/exceed-deadline`);
  t.false(labelsOf(stale.body).includes('claimed-no-relay-old'));
  const claim = await get<Record<string, unknown>[]>(`${apps.old.base}/api/pending-transactions/missing-claim`);
  t.deepEqual(Object.keys(claim.body[0]!), ['ageSeconds', 'Bridge', 'BridgeRequest', 'BridgeRelay', 'BridgeProof']);
  t.like(claim.body[0], { ageSeconds: 3 * H - 900, BridgeRelay: null, BridgeProof: { transactionHash: hash('proven-no-relay', 'proof') } });
  // The published document says so (and still refuses a null relay where the list has one).
  const doc = (await get<Record<string, never>>(`${apps.old.base}/openapi.json`)).body;
  const item = { $ref: '#/components/schemas/PendingTransactionMissingClaim' };
  t.deepEqual(checkAgainst(claim.body[0], item, doc), []);
  const proof = await get<Record<string, unknown>[]>(`${apps.old.base}/api/pending-transactions/missing-proof`);
  t.deepEqual(checkAgainst(proof.body[0], { $ref: '#/components/schemas/PendingTransactionMissingProof' }, doc), []);
  t.notDeepEqual(checkAgainst({ ...proof.body[0], BridgeRelay: null }, { $ref: '#/components/schemas/PendingTransactionMissingProof' }, doc), []);
});

test('GraphQL answers what REST answers, BridgeRelay null included', async (t) => {
  for (const route of LIST_ROUTES) {
    const res = await graphql<{ data: Record<string, { Bridge?: { transactionId: string }; transactionId?: string }[]> }>(apps.new.base,
      `{ ${route.graphqlField}(limit: 100) { ${route.query === 'invalidRelays' ? 'transactionId' : 'Bridge { transactionId }'} } }`);
    t.is(res.status, 200, route.graphqlField);
    t.deepEqual(labelsOf(res.body.data[route.graphqlField]), EXPECTED[route.query], route.graphqlField);
  }
  const claim = await graphql<{ data: { pendingTransactionsMissingClaim: unknown[] } }>(apps.old.base,
    '{ pendingTransactionsMissingClaim { ageSeconds Bridge { transactionId } BridgeRelay { transactionHash } BridgeProof { transactionHash } } }');
  t.deepEqual(claim.body.data.pendingTransactionsMissingClaim, [{
    ageSeconds: 3 * H - 900, Bridge: { transactionId: id('proven-no-relay') }, BridgeRelay: null, BridgeProof: { transactionHash: hash('proven-no-relay', 'proof') },
  }]);
});

test('/api/stats counts each stage as the lists hold it', async (t) => {
  for (const layout of ['old', 'new'] as const) {
    const stats = await get<{ stages: { stage: string; count: number; oldestAgeSeconds: number }[] }>(`${apps[layout].base}/api/stats`);
    t.is(stats.status, 200);
    const count = (stage: string) => stats.body.stages.filter((s) => s.stage === stage).reduce((n, s) => n + s.count, 0);
    t.is(count('missingRelay'), EXPECTED.missingRelay.length, layout);
    t.is(count('exceedDeadline'), EXPECTED.exceedDeadline.length, layout);
    t.is(count('missingProof'), EXPECTED.missingProof.length, layout);
    t.is(count('missingClaim'), EXPECTED.missingClaim.length, layout);
    t.is(count('disputed'), EXPECTED.disputes.length, layout);
    t.true(stats.body.stages.every((s) => s.oldestAgeSeconds >= 0), layout);
  }
});

test('a block time ahead of the server clock is 0 seconds old, in the lists and the stats', async (t) => {
  const relay = await get<{ ageSeconds: number; Bridge: { transactionId: string } }[]>(`${apps.old.base}/api/pending-transactions/missing-relay`);
  t.like(relay.body[0], { ageSeconds: 0, Bridge: { transactionId: id('from-the-future') } });
  t.true(relay.body.every((item) => item.ageSeconds >= 0));
  const gql = await graphql<{ data: { pendingTransactionsMissingRelay: { ageSeconds: number }[] } }>(apps.old.base, '{ pendingTransactionsMissingRelay(limit: 1) { ageSeconds } }');
  t.deepEqual(gql.body.data.pendingTransactionsMissingRelay, [{ ageSeconds: 0 }]);
});

test('amounts beyond 2^53 stay exact decimal strings', async (t) => {
  const relay = await get(`${apps.new.base}/api/pending-transactions/missing-relay?limit=1`);
  t.true(relay.text.includes(`"originAmount":"${HUGE}"`));
  t.true(relay.text.includes(`"destAmount":"${HUGE}"`));
});

test('the deadline cutoff: exactly 7 days old is exceed-deadline, one second younger is missing-relay', async (t) => {
  const since = `since=${NOW - 7 * D}&until=${NOW - 7 * D + 2}`;
  const relay = await get(`${apps.old.base}/api/pending-transactions/missing-relay?${since}`);
  t.deepEqual(labelsOf(relay.body), ['after-cutoff']);
  const stale = await get(`${apps.old.base}/api/pending-transactions/exceed-deadline?${since}`);
  t.deepEqual(labelsOf(stale.body), ['at-cutoff']);
});

test('the on-chain deadline: past it at 1 day old, exceed-deadline, not missing-relay; within it, missing-relay; 7 days old, exceed-deadline', async (t) => {
  for (const layout of ['old', 'new'] as const) {
    const relay = await get<{ Bridge: { transactionId: string; decodedRequest: { deadline: string } | null } }[]>(
      `${apps[layout].base}/api/pending-transactions/missing-relay`);
    const stale = await get(`${apps[layout].base}/api/pending-transactions/exceed-deadline`);
    t.false(labelsOf(relay.body).includes('past-deadline'), layout);
    t.true(labelsOf(stale.body).includes('past-deadline'), layout);
    t.true(labelsOf(stale.body).includes('past-deadline-v1'), layout);
    t.true(labelsOf(relay.body).includes('within-deadline'), layout);
    t.false(labelsOf(stale.body).includes('within-deadline'), layout);
    t.true(labelsOf(stale.body).includes('old-far-deadline'), layout);
    // What the operator reads: every deadline in missing-relay is now or later.
    for (const item of relay.body) {
      if (item.Bridge.decodedRequest) t.true(BigInt(item.Bridge.decodedRequest.deadline) >= BigInt(NOW), layout);
    }
    const gql = await graphql<{ data: Record<string, { Bridge: { transactionId: string } }[]> }>(apps[layout].base,
      '{ a: pendingTransactionsMissingRelay { Bridge { transactionId } } b: pendingTransactionsMissingRelayExceedDeadline { Bridge { transactionId } } }');
    t.deepEqual(labelsOf(gql.body.data.a), EXPECTED.missingRelay, layout);
    t.deepEqual(labelsOf(gql.body.data.b), EXPECTED.exceedDeadline, layout);
  }
});

test('the lookup takes a key with or without 0x, in any letter case; addresses come back checksummed', async (t) => {
  const key = id('proven-no-relay');
  for (const spelling of [key, key.toUpperCase().replace('0X', '0x'), key.slice(2), key.slice(2).toUpperCase(), `0X${key.slice(2)}`, hash('proven-no-relay', 'request').slice(2)]) {
    const res = await get<{ Bridge: { transactionId: string; sender: string } }>(`${apps.old.base}/api/transaction-id/${spelling}`);
    t.is(res.status, 200, spelling);
    t.is(res.body.Bridge.transactionId, key, spelling);
    t.is(res.body.Bridge.sender, getAddress(SENDER));
    const gql = await graphql<{ data: { transaction: { Bridge: { transactionId: string } } } }>(apps.new.base, `{ transaction(id: "${spelling}") { Bridge { transactionId } } }`);
    t.is(gql.body.data.transaction.Bridge.transactionId, key, spelling);
  }
  for (const bad of [`0x${key.slice(3)}`, `${key.slice(2)}0`, `0x0x${key.slice(4)}`, `x${key.slice(2)}`]) {
    const res = await get<{ parameter: string }>(`${apps.old.base}/api/transaction-id/${bad}`);
    t.is(res.status, 400, bad);
    t.is(res.body.parameter, 'transactionIdOrOriginTxHash');
  }
});
