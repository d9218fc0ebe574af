/**
 * Conformance: the execution-apis corpus (test/fixtures/execution-apis: requests and answers of
 * real clients, one or more per method of the spec) replayed through the gateway. Fake upstreams
 * answer each recorded request with the recorded answer, byte for byte; the client must get
 * exactly what the node sent (result or error, its id, HTTP 200), at N=1, at N=3, and in batches
 * of several members, with X-Confirmable as the method table of lib/jsonrpc/README.md says.
 */
import test, { type ExecutionContext } from 'ava';
import { startFakeUpstream, type FakeUpstream, type RpcCallIn } from '../../support/fake-upstream.js';
import { recordedPairs, withId, type RecordedPair } from '../../support/execution-apis.js';
import { startGateway, type Gateway } from '../../support/gateway.js';
import { until } from '../../support/wait.js';

const pairs = recordedPairs();

/**
 * The method table of lib/jsonrpc/README.md, written out here on its own (not read from lib/), so that a change
 * of the table is a change of this test too: where each confirmable method's pin sits.
 */
const confirmablePins: Record<string, number | 'filter'> = {
  eth_getBlockByNumber: 0,
  eth_getBlockTransactionCountByNumber: 0,
  eth_getBalance: 1,
  eth_getCode: 1,
  eth_getTransactionCount: 1,
  eth_call: 1,
  eth_getStorageAt: 2,
  eth_getLogs: 'filter',
  eth_getBlockReceipts: 0,
  eth_getBlockAccessList: 0,
  eth_getProof: 2,
  eth_getStorageValues: 1,
  eth_getTransactionByBlockNumberAndIndex: 0,
  eth_createAccessList: 1,
  eth_simulateV1: 1,
  debug_getRawHeader: 0,
  debug_getRawBlock: 0,
  debug_getRawReceipts: 0,
  eth_getBlockByHash: 0,
  eth_getBlockTransactionCountByHash: 0,
  eth_getTransactionByBlockHashAndIndex: 0,
  eth_getTransactionByHash: 0,
  eth_getTransactionReceipt: 0,
  debug_getRawTransaction: 0,
};
const neutral = new Set(['eth_chainId', 'net_version']);
/** The corpus's write methods (never sent upstream in a batch). */
const writes = new Set(['eth_sendRawTransaction']);

const fixedBlock = (v: unknown): boolean =>
  typeof v === 'string'
    ? /^0x[0-9a-f]+$/i.test(v) || v.toLowerCase() === 'earliest'
    : v !== null && typeof v === 'object' && (typeof (v as { blockHash?: unknown }).blockHash === 'string' || fixedBlock((v as { blockNumber?: unknown }).blockNumber));

function expectedConfirmable(request: RecordedPair['request']): boolean {
  const at = confirmablePins[request.method];
  if (at === undefined) return false;
  const params = request.params ?? [];
  if (at === 'filter') {
    const f = params[0] as Record<string, unknown>;
    return f.blockHash !== undefined || (fixedBlock(f.fromBlock) && fixedBlock(f.toBlock));
  }
  return fixedBlock(params[at]);
}

/**
 * Requests the gateway refuses itself, before any upstream (the params omnigate reads are not
 * valid: no node accepts them either): the client gets -32602 with its id and HTTP 200, as the
 * node of the recording sent its own -32602, and no upstream is called. Every other pair is
 * relayed as the node answered.
 */
const refusedByGateway = new Set([
  'debug_getRawBlock/get-invalid-number.io#0',
  'debug_getRawHeader/get-invalid-number.io#0',
  'debug_getRawReceipts/get-invalid-number.io#0',
  'debug_getRawTransaction/get-invalid-hash.io#0',
  'eth_getLogs/filter-error-invalid-blockHash-and-range.io#0',
]);

let fakes: FakeUpstream[];
let gw: Gateway;
/** The pairs the fakes answer now, by request id (tests run serially). */
let current = new Map<string, RecordedPair>();
/** Requests a fake received that were not the recorded ones. */
const strays: string[] = [];
const key = (id: unknown) => JSON.stringify(id);

/**
 * The head the fakes report to the gateway's head tracker: above every block of the corpus, so
 * that a node's "not found" for a block or hash is a vote, as the recording's node meant it.
 */
const trackedHead = '0xffffff';
/** Whether the head tracker's calls are answered (before the tests: none comes during them). */
let tracking = true;

/** A recorded request's params as the gateway sends them: `earliest` asked as block 0x0 (lib/jsonrpc/README.md). */
const asSent = (params: unknown[]): string => JSON.stringify(params).replace(/"earliest"/gi, '"0x0"');

function replay(call: RpcCallIn): string {
  const pair = current.get(key(call.id));
  if (tracking && call.method === 'eth_blockNumber') return JSON.stringify({ jsonrpc: '2.0', id: call.id, result: trackedHead });
  // (no safe/finalized head: the tags stay unresolved, relayed as the client wrote them)
  if (tracking && call.method === 'eth_getBlockByNumber') return JSON.stringify({ jsonrpc: '2.0', id: call.id, result: null });
  if (!pair || call.method !== pair.request.method || JSON.stringify(call.params ?? []) !== asSent(pair.request.params ?? [])) {
    strays.push(`${call.method} ${JSON.stringify(call.params)}`);
    return JSON.stringify({ jsonrpc: '2.0', id: call.id, error: { code: -32099, message: 'not a recorded request' } });
  }
  return withId(pair.responseText, pair.response.id, call.id);
}

test.before(async () => {
  fakes = await Promise.all([1, 2, 3].map(() => startFakeUpstream({ raw: replay, rawBatch: true })));
  // Heads tracked (one round, no other before the tests end): a "not found" from an upstream whose
  // head is unknown would not be a vote.
  gw = await startGateway({ heads: { intervalMs: 3_600_000 }, chains: { 1337: { rpcs: fakes.map((f) => f.url) } } });
  gw.rpc.startHeadTracking();
  const upstreams = gw.rpc.registry.chains.get('1337')!.upstreams;
  await until(() => upstreams.every((u) => u.health.headPolledAt > 0));
  tracking = false;
});

test.after.always(async () => {
  await gw?.close();
  await Promise.all((fakes ?? []).map((f) => f.close()));
});

const calls = () => fakes.reduce((sum, f) => sum + f.calls, 0);
const sevenHeaders = ['content-type', 'x-request-id', 'x-confirmable', 'x-required-confirmations', 'x-forwarded-from', 'x-checked-urls', 'x-json-hash'];

test.serial('the corpus has at least one pair for every method of its folders, and 25 methods or more', (t) => {
  const methods = new Set(pairs.map((p) => p.method));
  t.true(methods.size >= 25, `${methods.size} methods`);
  for (const m of methods) t.true(pairs.some((p) => p.method === m && p.request.method === m), m);
});

for (const n of [1, 3]) {
  for (const pair of pairs) {
    test.serial(`N=${n}: ${pair.name} (${pair.request.method}) comes back as the node sent it`, async (t) => {
      current = new Map([[key(pair.request.id), pair]]);
      strays.length = 0;
      const before = calls();
      const path = n === 1 ? '/rpc/1337' : `/confirmations/${n}/rpc/1337`;
      const r = await gw.post(path, pair.requestText);
      if (refusedByGateway.has(pair.name)) {
        t.is(r.status, 200, 'as a node sends its -32602');
        t.is(r.body.error.code, -32602);
        t.is(pair.response.error?.code, -32602, 'the node of the recording said -32602 too');
        t.is(r.headers['x-confirmable'], 'false');
        t.is(r.headers['x-required-confirmations'], '1');
        t.deepEqual(r.body.id, pair.request.id);
        t.is(calls() - before, 0);
        return;
      }
      t.is(r.status, 200, r.text.slice(0, 300));
      t.is(r.text, pair.responseText); // lossless: the node's bytes, its result or error, the id
      for (const h of sevenHeaders) t.truthy(r.headers[h], h);
      const confirmable = expectedConfirmable(pair.request);
      t.is(r.headers['x-confirmable'], String(confirmable));
      const required = confirmable ? n : 1;
      t.is(r.headers['x-required-confirmations'], String(required));
      t.is(calls() - before, required);
      t.deepEqual(strays, []);
    });
  }
}

/**
 * Every pair is a batch member, refused ones and node errors too: each member is answered on its
 * own (issue 25), in order, with its own id: a node's answer as the node sent it, a refusal of the
 * gateway as its own -32602 error. Each member is asked of its own N (a chain constant beside a
 * confirmable call follows it), a refused one of no upstream. The batch's headers follow spec B2
 * on every answer: X-Confirmable true only when every member was confirmed,
 * X-Required-Confirmations 1 whenever X-Confirmable is false (else N), X-Checked-URLS and
 * X-Forwarded-From the unions over the members.
 */
const refused = (p: RecordedPair) => refusedByGateway.has(p.name);

async function replayBatch(t: ExecutionContext, n: number, members: RecordedPair[], ids: (string | number)[]): Promise<void> {
  current = new Map(members.map((p, k) => [key(ids[k]), p]));
  strays.length = 0;
  const before = calls();
  const sentBefore = fakes.map((f) => f.requests.length);
  const body = `[${members.map((p, k) => JSON.stringify({ ...p.request, id: ids[k] })).join(',')}]`;
  const path = n === 1 ? '/rpc/1337' : `/confirmations/${n}/rpc/1337`;
  const r = await gw.post(path, body);
  t.is(r.status, 200, r.text.slice(0, 300));
  t.true(Array.isArray(r.body), r.text.slice(0, 300));
  members.forEach((p, k) => {
    if (!refused(p)) return;
    t.is(r.body[k].error.code, -32602, p.name);
    t.is(r.body[k].id, ids[k]);
  });
  const expected = members.map((p, k) => (refused(p) ? JSON.stringify(r.body[k]) : withId(p.responseText, p.response.id, ids[k])));
  t.is(r.text, `[${expected.join(',')}]`);
  const anyConfirmable = members.some((p) => !refused(p) && expectedConfirmable(p.request));
  const perMember = members.map((p) => (refused(p) ? 0 : expectedConfirmable(p.request) || (neutral.has(p.request.method) && anyConfirmable) ? n : 1));

  // The headers of the whole array (spec B2), worked out here from the members alone.
  const confirmed = members.map((p) => !refused(p) && (expectedConfirmable(p.request) || (neutral.has(p.request.method) && anyConfirmable)));
  const confirmable = confirmed.every(Boolean);
  for (const h of sevenHeaders) t.true(h in r.headers, h);
  t.is(r.headers['x-confirmable'], String(confirmable));
  t.is(r.headers['x-required-confirmations'], confirmable ? String(n) : '1', 'N when every member was confirmed, else 1');

  // What each upstream was sent for this batch, and which members' calls it got.
  const sent = fakes.map((f, i) => f.requests.slice(sentBefore[i]).map((q) => (Array.isArray(q.body) ? q.body : [q.body]) as RpcCallIn[]));
  const askedFor = (k: number) => fakes.filter((_, i) => sent[i]!.flat().some((c) => key(c.id) === key(ids[k]))).map((f) => f.url);
  const list = (h: unknown) => String(h ?? '').split(',').filter(Boolean);
  // X-Checked-URLS: the union of the members' agreeing upstreams (every call agreed here: the
  // fakes all replay the node's bytes), each once.
  const checked = list(r.headers['x-checked-urls']);
  t.deepEqual([...checked].sort(), [...new Set(members.flatMap((_, k) => askedFor(k)))].sort(), 'X-Checked-URLS: the union of the upstreams that answered a member');
  t.is(new Set(checked).size, checked.length, 'X-Checked-URLS names each upstream once');
  // X-Forwarded-From: the union of the upstreams whose bytes were returned, one per answered
  // member (a member asked of one upstream: that one), each once, among the checked.
  const forwarded = list(r.headers['x-forwarded-from']);
  t.is(new Set(forwarded).size, forwarded.length, 'X-Forwarded-From names each upstream once');
  t.true(forwarded.every((u) => checked.includes(u)), 'X-Forwarded-From: among the checked upstreams');
  const answered = members.map((_, k) => k).filter((k) => !refused(members[k]!));
  t.is(forwarded.length > 0, answered.length > 0);
  t.true(forwarded.length <= answered.length);
  for (const k of answered) {
    const asked = askedFor(k);
    t.true(asked.some((u) => forwarded.includes(u)), `member ${k} (${members[k]!.name}): one of its upstreams is in X-Forwarded-From`);
    if (asked.length === 1) t.true(forwarded.includes(asked[0]!), `member ${k} (${members[k]!.name}): its one upstream is in X-Forwarded-From`);
  }

  // One upstream call per member and vote; a batch's reads to one upstream go as one upstream
  // batch (the N=1 ones to one upstream, the N=3 ones to all three), a write alone.
  t.is(sent.flat(2).length, perMember.reduce((a, c) => a + c, 0));
  t.is(calls() - before, sent.flat().length);
  const isWrite = (c: RpcCallIn) => writes.has(c.method);
  const writeCalls = members.filter((p, k) => perMember[k]! > 0 && writes.has(p.request.method)).length;
  const readRequests = perMember.some((c, k) => c === 3 && !writes.has(members[k]!.request.method)) ? 3 : perMember.some((c, k) => c > 0 && !writes.has(members[k]!.request.method)) ? 1 : 0;
  t.is(sent.flat().filter((q) => !q.some(isWrite)).length, readRequests, 'one request per upstream asked reads');
  t.true(sent.every((f) => f.filter((q) => !q.some(isWrite)).length <= 1));
  t.deepEqual(sent.flat().filter((q) => q.some(isWrite)).map((q) => q.length), Array(writeCalls).fill(1), 'writes alone');
  t.deepEqual(strays, []);
}

/** The corpus in batches of five consecutive pairs. */
const batchSize = 5;
const batches: RecordedPair[][] = [];
for (let i = 0; i < pairs.length; i += batchSize) batches.push(pairs.slice(i, i + batchSize));

for (const n of [1, 3]) {
  for (const [b, members] of batches.entries()) {
    const ids = members.map((_, k) => (k % 2 === 0 ? 2 ** 40 + b * 10 + k : `m-${b}-${k}`));
    test.serial(`N=${n}: batch ${b} (${members.map((p) => p.request.method).join(', ')}) comes back member by member as the nodes sent them`, async (t) => {
      await replayBatch(t, n, members, ids);
    });
  }
}

/**
 * Every pair beside a confirmable read that N confirm (the corpus's first pinned eth_getBalance
 * answered with a result): the batch is X-Confirmable true (X-Required-Confirmations N) exactly
 * when the pair itself is confirmed, and a pair the gateway refuses, an unconfirmable one or a
 * write makes the whole array false with X-Required-Confirmations 1, whatever N its neighbour had.
 */
const anchor = pairs.find((p) => p.request.method === 'eth_getBalance' && !refused(p) && expectedConfirmable(p.request) && p.response.result !== undefined);
for (const n of [1, 3]) {
  for (const [i, pair] of pairs.entries()) {
    test.serial(`N=${n}: ${pair.name} beside a confirmed eth_getBalance: the batch's headers follow the members`, async (t) => {
      if (!anchor) return t.fail('the corpus has no pinned eth_getBalance answered with a result');
      await replayBatch(t, n, [anchor, pair], [`anchor-${i}`, `pair-${i}`]);
    });
  }
}
