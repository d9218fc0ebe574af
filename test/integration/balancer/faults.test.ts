/**
 * Fault test (issue 5): upstreams that die mid-response, reset connections, answer slowly
 * (slowloris), answer truncated JSON, redirect, return the wrong id or a mangled batch, and more
 * (test/support/faulty-upstream.ts lists every mode). For each fault:
 * - ranked first before honest fakes, for a non-confirmable (N=1) and a confirmable (N=2) request:
 *   200 from honest upstreams, the faulty URL never in X-Checked-URLS, the faulty upstream asked
 *   once, the answer within timeouts.upstreamMs (plus slack);
 * - with only faulty upstreams: a JSON-RPC 502 (-32011) whose data names each failure's reason,
 *   never a 500, never a hang.
 * Then: calls still in flight are aborted (the upstream sees its connection closed) when the
 * request is decided, when its deadline passes and when the client goes away; and 600 faulty
 * requests leave no handle behind. Each HTTP fault, and each abort, is met on both HTTP clients
 * (`upstreams.client`: node, undici). The leak test runs alone (serial: before the others), so
 * that its handle counts mean something; the others, four at a time (most of their time is a
 * stalled fault waiting out its deadline; the bounds below have seconds of slack).
 */
import test, { type ExecutionContext } from 'ava';
import http from 'node:http';
import { defaultAnswer, render, startFakeUpstream } from '../../support/fake-upstream.js';
import {
  httpFaultModes,
  startFaultyUpstream,
  startFaultyWsUpstream,
  wsFaultModes,
  type FaultyUpstream,
  type HttpFaultMode,
  type WsFaultMode,
} from '../../support/faulty-upstream.js';
import { rpc, startGateway, type Reply } from '../../support/gateway.js';
import { slots } from '../../support/wait.js';

const gate = slots(4);

/**
 * The per-call deadline: what ends a stalled fault (slowloris, stall-headers), and what an honest
 * fake in this process must answer within while the machine is loaded (a 500 ms one was missed on
 * a shared 2-core machine: the honest call failed too, and the test with it).
 */
const upstreamMs = 2_000;
const requestMs = 10_000; // room for two stalled calls in a row (N=1 over two of them), and then some
const responseBytes = 16_384;
/**
 * Slack on top of a timeout. These bounds only prove the gateway does not wait for a fault to
 * play out (a slowloris body takes 16 s, a hung call forever); they are not speed assertions,
 * so the slack is wide for shared 2-core machines with other test files running.
 */
const slackMs = 5_000;

const account = '0x1111111111111111111111111111111111111111';
const single = { n1: rpc('eth_getBalance', [account, 'latest'], 1), n2: rpc('eth_getBalance', [account, '0x10'], 1) };
// The last member has id "b", so a fault that drops or replaces the last member is named by it.
const batch = {
  n1: [rpc('eth_getBalance', [account, 'latest'], 1), rpc('eth_blockNumber', [], 'b')],
  n2: [rpc('eth_getBalance', [account, '0x10'], 1), rpc('eth_getBlockByNumber', ['0x2', false], 'b')],
};

/** The HTTP clients (`upstreams.client`): each HTTP fault is met on both; the rest runs on node, the default. */
const clients = ['node', 'undici'] as const;
type Client = (typeof clients)[number];

// No hedging: a stalled fault runs to upstreamMs, which is above the tests' default hedge delay,
// and what is checked is one upstream asked after another, in ranking order.
const config = (rpcs: string[], extra: Record<string, unknown> = {}, client: Client = 'node') => ({
  timeouts: { upstreamMs, requestMs, hedgeMs: 0 },
  limits: { responseBytes },
  upstreams: { client },
  chains: { 1: { rpcs, confirmations: Math.min(2, rpcs.length) } },
  ...extra,
});

const honestAnswer = (body: unknown) => JSON.parse(render('honest', body, defaultAnswer)) as unknown;

type Closable = { close(): Promise<void> };
/** Closes `thing` when the test ends, passed or failed (a failed assertion ends a test at once). */
function closeLater<T extends Closable>(t: ExecutionContext, thing: T): T {
  t.teardown(() => thing.close());
  return thing;
}
async function started<T extends Closable>(t: ExecutionContext, thing: Promise<T>): Promise<T> {
  return closeLater(t, await thing);
}
async function startedAll<T extends Closable>(t: ExecutionContext, things: Promise<T>[]): Promise<T[]> {
  return (await Promise.all(things)).map((x) => closeLater(t, x));
}

/** Polls `predicate` until it holds or `ms` pass (only that long when the test is about to fail); returns whether it held. */
async function waitFor(predicate: () => boolean, ms = 20_000): Promise<boolean> {
  const until = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

async function timed(fn: () => Promise<Reply>): Promise<Reply & { ms: number }> {
  const started = performance.now();
  const r = await fn();
  return Object.assign(r, { ms: performance.now() - started });
}

interface FaultCase {
  mode: HttpFaultMode | WsFaultMode;
  /** What error.data.failures says about it. */
  reason: RegExp;
  /** Needs a batch request to be a fault at all (the gateway sends none upstream: see below). */
  batch?: boolean;
  /** Ends by omnigate's per-call timeout: the gateway must close the connection itself. */
  timesOut?: boolean;
}

const socketClosed = /connection closed before the answer was complete|ECONNRESET|EPIPE/;
const cases: FaultCase[] = [
  { mode: 'die-mid-response', reason: socketClosed },
  { mode: 'die-mid-chunked', reason: socketClosed },
  { mode: 'hangup', reason: socketClosed },
  { mode: 'reset', reason: socketClosed },
  { mode: 'slowloris', reason: new RegExp(`no answer within ${upstreamMs} ms`), timesOut: true },
  { mode: 'stall-headers', reason: new RegExp(`no answer within ${upstreamMs} ms`), timesOut: true },
  // (llhttp's reason either way; undici gives no code with it.)
  { mode: 'not-http', reason: /^invalid HTTP response: Expected HTTP\/, RTSP\/ or ICE\/( \(HPE_INVALID_CONSTANT\))?$/ },
  { mode: 'truncated-json', reason: /^not JSON/ },
  { mode: 'trailing-garbage', reason: /^not JSON/ },
  { mode: 'redirect-302', reason: /^HTTP 302$/ },
  { mode: 'redirect-307', reason: /^HTTP 307$/ },
  { mode: 'redirect-308', reason: /^HTTP 308$/ },
  { mode: 'status-500-json', reason: /^HTTP 500$/ },
  { mode: 'wrong-id', reason: /wrong id 1001 \(expected 1\)/ },
  { mode: 'wrong-id-type', reason: /wrong id "1" \(expected 1\)/ },
  { mode: 'rate-limited', reason: /rate limited -32005/ },
  { mode: 'garbage-status', reason: /^not JSON: "<!doctype html>/ },
  { mode: 'empty', reason: /^not JSON: ""$/ },
  { mode: 'array-for-single', reason: /not a JSON-RPC response object/ },
  { mode: 'huge-header', reason: /^invalid HTTP response: Header overflow \((HPE_HEADER_OVERFLOW|UND_ERR_HEADERS_OVERFLOW)\)$/ },
  { mode: 'oversize', reason: /over the 16384-byte limit/ },
  { mode: 'oversize-chunked', reason: /over the 16384-byte limit/ },
  { mode: 'batch-missing-id', reason: /no answer for batch id "b"/, batch: true },
  { mode: 'batch-foreign-id', reason: /batch answer has id "b-other", which was not asked/, batch: true },
  {
    mode: 'batch-extra-member',
    reason: /not-asked-for|not asked|unexpected|foreign|extra/i,
    batch: true,
  },
  {
    mode: 'batch-duplicate-id',
    reason: /duplicate|twice|repeated|more than once/i,
    batch: true,
  },
  { mode: 'batch-as-object', reason: /answered the batch with one error/, batch: true },
  { mode: 'ws-drop', reason: /websocket closed \(code 1006\)/ },
  { mode: 'ws-close-1011', reason: /websocket closed \(code 1011\)/ },
  { mode: 'ws-wrong-id', reason: /matches no call in flight/ },
  { mode: 'ws-not-json', reason: /not a JSON-RPC answer/ },
  { mode: 'ws-batch-missing-id', reason: /no answer for batch id "b"/, batch: true },
];

test('the fault table covers every mode of the faulty upstream', (t) => {
  t.deepEqual(cases.map((c) => c.mode).sort(), [...httpFaultModes, ...wsFaultModes].sort());
});

const isWs = (mode: string) => mode.startsWith('ws-');

function startFaulty(c: FaultCase, redirectTo?: string): Promise<FaultyUpstream> {
  if (isWs(c.mode)) return startFaultyWsUpstream(c.mode as WsFaultMode);
  return startFaultyUpstream(c.mode as HttpFaultMode, { redirectTo, oversizeBytes: 4 * responseBytes });
}

const title = (c: FaultCase, what: string, client?: Client) => `${client && !isWs(c.mode) ? `${client}: ` : ''}${c.mode}: ${what}`;

for (const c of cases) for (const client of isWs(c.mode) ? (['node'] as const) : clients) {
  // The gateway never sends an upstream a batch (each member goes upstream on its own, issue 25):
  // a mangled batch answer cannot reach it. Its check stays in answers.ts (unit-tested); on the
  // wire, such an upstream is asked once per member below.
  if (c.batch) continue;
  for (const [label, key, n] of [
    ['not confirmable, N=1', 'n1', 1],
    ['confirmable, N=2', 'n2', 2],
  ] as const) {
    test(title(c, `should fail over to honest upstreams (${label})`, client), async (t) => {
      await gate(t);
      const body = (c.batch ? batch : single)[key];
      // A redirect points at an honest upstream that is not configured: following it would be seen.
      const trap = await started(t, startFakeUpstream());
      const faulty = await started(t, startFaulty(c, trap.url));
      const honest = await startedAll(t, [startFakeUpstream(), startFakeUpstream()]);
      const gw = await started(t, startGateway(config([faulty.url, ...honest.map((h) => h.url)], {}, client)));
      const r = await timed(() => gw.post('/rpc/1', body));
      t.is(r.status, 200, r.text);
      t.deepEqual(r.body, honestAnswer(body), 'the honest answer, unchanged');
      t.is(r.headers['x-required-confirmations'], String(n));
      const checked = String(r.headers['x-checked-urls']).split(',');
      t.false(checked.includes(faulty.url), `X-Checked-URLS names the faulty upstream: ${checked.join(',')}`);
      t.deepEqual(checked.sort(), honest.slice(0, n).map((h) => h.url).sort());
      t.not(r.headers['x-forwarded-from'], faulty.url);
      t.is(faulty.requests, 1, 'the faulty upstream is asked once');
      t.is(honest[0]!.calls + honest[1]!.calls, n, 'one more upstream per failed vote, no more');
      t.is(trap.calls, 0, 'redirects are not followed');
      t.true(r.ms < upstreamMs + slackMs, `answered in ${Math.round(r.ms)} ms`);
      if (c.timesOut && !isWs(c.mode)) {
        t.true(await waitFor(() => faulty.aborted === 1 && faulty.openRequestSockets === 0), 'the timed-out call’s connection is closed');
      }
    });
  }

  for (const [label, key, n, count] of [
    ['N=1', 'n1', 1, 2],
    ['N=2', 'n2', 2, 3],
  ] as const) {
    test(title(c, `should answer a JSON-RPC 502 naming the fault when every upstream fails (${label})`, client), async (t) => {
      await gate(t);
      const body = (c.batch ? batch : single)[key];
      const trap = await started(t, startFakeUpstream());
      const faulty = await startedAll(t, Array.from({ length: count }, () => startFaulty(c, trap.url)));
      const gw = await started(t, startGateway(config(faulty.map((f) => f.url), {}, client)));
      const r = await timed(() => gw.post('/rpc/1', body));
      t.is(r.status, 502, r.text);
      t.is(r.headers['content-type'], 'application/json');
      t.is(r.body?.error?.code, -32011, r.text);
      t.is(r.body.id, c.batch ? null : 1);
      const data = r.body.error.data as { failures: { upstream: string; reason: string }[]; unanswered: string[]; groups: unknown[] };
      t.deepEqual(data.groups, []);
      t.true(data.failures.length >= 1);
      for (const f of data.failures) t.regex(f.reason, c.reason, `${f.upstream}: ${f.reason}`);
      if (n === 1) {
        // N=1: each upstream is asked in turn, and each failure is named.
        t.deepEqual(data.failures.map((f) => f.upstream).sort(), faulty.map((f) => f.url).sort());
      } else {
        // N=2: once no pair can form, the call still running is given up on (unanswered).
        t.deepEqual([...data.failures.map((f) => f.upstream), ...data.unanswered].sort(), faulty.map((f) => f.url).sort());
      }
      // The first N are asked at once; a third (N=2) may be given up on before its request is sent.
      t.deepEqual(faulty.slice(0, n).map((f) => f.requests), faulty.slice(0, n).map(() => 1));
      t.true(faulty.every((f) => f.requests <= 1), 'no upstream is asked twice');
      t.is(trap.calls, 0);
      const bound = (c.timesOut ? count * upstreamMs : 0) + slackMs;
      t.true(r.ms < bound, `answered in ${Math.round(r.ms)} ms (bound ${bound} ms)`);
    });
  }
}

for (const c of cases.filter((x) => x.batch)) {
  // A batch's members are asked each on its own; their calls to one HTTP upstream go as one
  // upstream batch (lib/upstream/transport/coalesce.ts), split back by id. A mangled batch answer fails
  // every member there, and each asks another upstream, as a single call would; an upstream that
  // answers a batch with one error object (a provider refusing batches) is asked each call alone.
  // A WebSocket upstream gets no batches (each member alone).
  test(title(c, 'a batch through such an upstream: every member gets the honest answer'), async (t) => {
    await gate(t);
    const trap = await started(t, startFakeUpstream());
    const faulty = await started(t, startFaulty(c, trap.url));
    const honest = await startedAll(t, [startFakeUpstream(), startFakeUpstream()]);
    const gw = await started(t, startGateway(config([faulty.url, ...honest.map((h) => h.url)])));
    // N=2 first: the first two in list order, the faulty one and honest[0], are asked at once.
    const r = await timed(() => gw.post('/rpc/1', batch.n2));
    t.is(r.status, 200, r.text);
    t.deepEqual(r.body, honestAnswer(batch.n2), 'each member the honest answer, in order');
    t.is(r.headers['x-required-confirmations'], '2');
    const shapes = honest.map((h) => h.requests.map((q) => (Array.isArray(q.body) ? q.body.length : 1)));
    if (isWs(c.mode)) {
      t.is(faulty.requests, 2, 'a WebSocket upstream: each member alone');
    } else if (c.mode === 'batch-as-object') {
      t.is(faulty.requests, 1 + 2, 'the batch, then each member alone');
      t.deepEqual(shapes, [[2], []]);
      t.deepEqual(String(r.headers['x-checked-urls']).split(',').sort(), [faulty.url, honest[0]!.url].sort(), 'its single answers count');
    } else {
      t.is(faulty.requests, 1, 'one upstream batch');
      t.deepEqual(shapes, [[2], [2]], 'both members failed on the faulty one: asked of honest[1] together');
      t.is(r.headers['x-checked-urls'], honest.map((h) => h.url).join(','));
    }
    const n1 = await timed(() => gw.post('/rpc/1', batch.n1));
    t.is(n1.status, 200, n1.text);
    t.deepEqual(n1.body, honestAnswer(batch.n1), 'N=1: each member the honest answer, in order');
    t.is(trap.calls, 0);
  });
}

for (const client of clients) {
  test(`${client}: should name every fault when a chain has one upstream of each kind and none answers (N=1)`, async (t) => {
    await gate(t);
    const usable = cases.filter((c) => !c.batch);
    const faulty = await startedAll(t, usable.map((c) => startFaulty(c)));
    const gw = await started(t, startGateway(config(faulty.map((f) => f.url), { timeouts: { upstreamMs, requestMs: 20_000, hedgeMs: 0 } }, client)));
    const r = await timed(() => gw.post('/rpc/1', single.n1));
    t.is(r.status, 502, r.text);
    t.is(r.body.id, 1);
    t.is(r.body.error.code, -32011);
    const failures = r.body.error.data.failures as { upstream: string; reason: string }[];
    t.deepEqual(failures.map((f) => f.upstream), faulty.map((f) => f.url), 'asked in ranking order, one at a time');
    for (const [i, c] of usable.entries()) t.regex(failures[i]!.reason, c.reason, c.mode);
    t.deepEqual(faulty.map((f) => f.requests), usable.map(() => 1));
    const slow = usable.filter((c) => c.timesOut).length;
    t.true(r.ms < slow * upstreamMs + 2 * slackMs, `answered in ${Math.round(r.ms)} ms`);
  });

  test(`${client}: should answer 504 (-32012) when slowloris upstreams outlast the request deadline`, async (t) => {
    await gate(t);
    const faulty = await startedAll(t, [startFaultyUpstream('slowloris'), startFaultyUpstream('slowloris'), startFaultyUpstream('slowloris')]);
    const gw = await started(t, startGateway(config(faulty.map((f) => f.url), { timeouts: { upstreamMs: 5_000, requestMs: 400 } }, client)));
    const r = await timed(() => gw.post('/rpc/1', { ...single.n2, id: 504 }));
    t.is(r.status, 504, r.text);
    t.is(r.body.id, 504);
    t.is(r.body.error.code, -32012);
    t.deepEqual([...r.body.error.data.unanswered].sort(), faulty.slice(0, 2).map((f) => f.url).sort());
    t.true(r.ms < 400 + slackMs, `answered in ${Math.round(r.ms)} ms`);
    t.deepEqual(faulty.map((f) => f.requests), [1, 1, 0]);
    t.true(await waitFor(() => faulty.every((f) => f.openRequestSockets === 0)), 'the slowloris connections are closed at the deadline');
    t.deepEqual(faulty.map((f) => f.aborted), [1, 1, 0]);
  });
}

// ---------------------------------------------------------------------------------------------
// Nothing keeps running once the request is over.
//
// decide() (lib/verify/quorum.ts) keeps exactly "missing votes" calls in flight, so a group of N
// can only form when no call is left running: an in-flight call becomes unneeded only when the
// decision is "failed" (no group can reach N any more), when the deadline passes or when the
// client goes away. Each of those is tested here.

for (const client of clients) {
  test(`${client}: should abort a call still in flight once no group can reach N, and close its connection`, async (t) => {
    await gate(t);
    const reset = await started(t, startFaultyUpstream('reset'));
    // Its answer, the upstream timeout and the request deadline all lie far beyond the waits below:
    // not finished when the 502 comes, it was not waited for; aborted within them, by the decision.
    const slow = await started(t, startFaultyUpstream('slow-but-valid', { delayMs: 60_000 }));
    const gw = await started(t, startGateway(config([reset.url, slow.url], { timeouts: { upstreamMs: 60_000, requestMs: 60_000 } }, client)));
    const r = await gw.post('/rpc/1', single.n2);
    t.is(r.status, 502, r.text);
    t.is(r.body.error.code, -32011);
    t.deepEqual(r.body.error.data.unanswered, [slow.url]);
    t.is(slow.finished, 0, 'answered without waiting for the slow upstream (it had not answered yet)');
    t.true(await waitFor(() => slow.aborted === 1 && slow.openRequestSockets === 0, 20_000), JSON.stringify(slow));
    t.is(slow.finished, 0);
  });

  test(`${client}: should abort every in-flight call when the request deadline passes`, async (t) => {
    await gate(t);
    const slow = await startedAll(t, [startFaultyUpstream('slow-but-valid'), startFaultyUpstream('slow-but-valid')]);
    const gw = await started(t, startGateway(config(slow.map((s) => s.url), { timeouts: { upstreamMs: 5_000, requestMs: 300 } }, client)));
    const r = await timed(() => gw.post('/rpc/1', single.n2));
    t.is(r.status, 504, r.text);
    t.is(r.body.error.code, -32012);
    t.true(r.ms < 300 + slackMs);
    t.true(await waitFor(() => slow.every((s) => s.aborted === 1 && s.openRequestSockets === 0)), JSON.stringify(slow));
    t.deepEqual(slow.map((s) => s.finished), [0, 0]);
  });

  test(`${client}: should abort the upstream calls when the client disconnects mid-request, and keep serving`, async (t) => {
    await gate(t);
    // The slow answers, the upstream timeout and the request deadline all lie far beyond the wait
    // below: calls aborted within it, never finished, were aborted because the client went away.
    const slow = await startedAll(t, [startFaultyUpstream('slow-but-valid', { delayMs: 60_000 }), startFaultyUpstream('slow-but-valid', { delayMs: 60_000 })]);
    const honest = await started(t, startFakeUpstream());
    const gw = await started(
      t,
      startGateway({
        timeouts: { upstreamMs: 60_000, requestMs: 60_000 },
        upstreams: { client },
        chains: { 1: { rpcs: slow.map((s) => s.url), confirmations: 2 }, 2: { rpcs: [honest.url] } },
      }),
    );
    const clientError = new Promise<Error>((resolve) => {
      const req = http.request(`${gw.url}/rpc/1`, { method: 'POST', headers: { 'content-type': 'application/json' }, agent: false });
      req.on('error', resolve);
      req.on('response', () => resolve(new Error('unexpected response')));
      req.end(JSON.stringify(single.n2));
      void waitFor(() => slow.every((s) => s.requests === 1)).then(() => req.destroy());
    });
    t.regex((await clientError).message, /socket hang up|aborted|ECONNRESET/);
    t.true(await waitFor(() => slow.every((s) => s.aborted === 1 && s.openRequestSockets === 0), 20_000), JSON.stringify(slow));
    t.deepEqual(slow.map((s) => s.finished), [0, 0]);
    const after = await gw.post('/rpc/2', single.n1);
    t.is(after.status, 200, 'the gateway still answers');
  });
}

test('should drop a ws answer that arrives after the deadline and reuse the connection', async (t) => {
  await gate(t);
  const slow = await started(t, startFaultyWsUpstream('ws-slow-but-valid', { delayMs: 400 }));
  const gw = await started(t, startGateway(config([slow.url], { timeouts: { upstreamMs: 5_000, requestMs: 200 } })));
  const late = await gw.post('/rpc/1', single.n1);
  t.is(late.status, 504, late.text);
  // the late answer is sent (and dropped by the gateway: the next answer on the connection is the next call's)
  t.true(await waitFor(() => slow.finished === 1), `${slow.finished} answers sent`);
  const again = await gw.post('/rpc/1', single.n1);
  t.is(again.status, 504, 'the next call goes out on the same connection (and is just as slow)');
  t.is(slow.requests, 2);
  t.is(slow.connections, 1, 'one persistent connection');
});

// ---------------------------------------------------------------------------------------------
// No leak.

function resources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of process.getActiveResourcesInfo()) counts[r] = (counts[r] ?? 0) + 1;
  return counts;
}
const total = (c: Record<string, number>) => Object.values(c).reduce((a, b) => a + b, 0);

test.serial('should leave no handle behind after 600 faulty requests', async (t) => {
  await new Promise((resolve) => setTimeout(resolve, 50));
  const baseline = resources();
  const modes = cases;
  const closables: Closable[] = [];
  const closeEverything = async () => {
    await Promise.all(closables.splice(0).map((x) => x.close()));
  };
  t.teardown(closeEverything);
  const track = async <T extends Closable>(p: Promise<T>[]) => {
    const all = await Promise.all(p);
    closables.push(...all);
    return all;
  };
  const honest = await track([startFakeUpstream(), startFakeUpstream()]);
  const faulty = await track(modes.map((c) => startFaulty(c)));
  const faulty2 = await track(modes.map((c) => startFaulty(c)));
  const chains: Record<string, { rpcs: string[]; confirmations: number }> = {};
  const plan: { chain: string; body: unknown }[] = [];
  modes.forEach((c, i) => {
    // every request of the all-faulty chain fails; the failover chain answers 200
    chains[String(100 + i)] = { rpcs: [faulty[i]!.url, faulty2[i]!.url], confirmations: 2 };
    chains[String(200 + i)] = { rpcs: [faulty[i]!.url, honest[0]!.url, honest[1]!.url], confirmations: 2 };
    const bodies = c.batch ? batch : single;
    plan.push({ chain: String(100 + i), body: bodies.n1 }, { chain: String(100 + i), body: bodies.n2 });
    plan.push({ chain: String(200 + i), body: bodies.n1 });
  });
  while (plan.length < 100) plan.push(plan[plan.length % modes.length]!);
  plan.length = 100;
  const [gw] = await track([startGateway({ timeouts: { upstreamMs: 300, requestMs: 2_000 }, limits: { responseBytes }, chains })]);
  const statuses = new Map<number, number>();
  /** One pass over the plan: 100 requests, 20 at a time. */
  const pass = async () => {
    for (let at = 0; at < plan.length; at += 20) {
      const replies = await Promise.all(plan.slice(at, at + 20).map((p) => gw!.post(`/rpc/${p.chain}`, p.body)));
      for (const r of replies) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    }
  };
  // Let the last calls settle (slowloris drips, closing sockets) before counting.
  const settle = () => new Promise((resolve) => setTimeout(resolve, 400));
  // Batch members go upstream one by one and in parallel, so the keep-alive pools grow over the
  // first passes up to what this load needs (about 140-165 sockets here, 18 once idle), then stay
  // there: the most sockets seen after passes 4-6 is no more than after passes 1-3.
  const busiest = (a: Record<string, number>, b: Record<string, number>) => ((a.TCPSocketWrap ?? 0) >= (b.TCPSocketWrap ?? 0) ? a : b);
  const sample = async () => {
    await pass();
    await settle();
    return resources();
  };
  const warm = busiest(busiest(await sample(), await sample()), await sample());
  const hot = busiest(busiest(await sample(), await sample()), await sample());
  const bad = [...statuses.keys()].filter((s) => ![200, 502, 504].includes(s));
  await closeEverything();
  const closed = await waitFor(() => total(resources()) <= total(baseline));
  const after = resources();

  t.deepEqual(bad, [], `statuses: ${JSON.stringify([...statuses])}`);
  t.true((statuses.get(502) ?? 0) >= 100, `the all-faulty chains kept failing: ${JSON.stringify([...statuses])}`);
  t.true((statuses.get(200) ?? 0) >= 50, `the failover chains answered: ${JSON.stringify([...statuses])}`);
  t.log(`resources: baseline ${JSON.stringify(baseline)}, busiest after passes 1-3 ${JSON.stringify(warm)}, after passes 4-6 ${JSON.stringify(hot)}, closed ${JSON.stringify(after)}`);
  t.true((hot.TCPSocketWrap ?? 0) - (warm.TCPSocketWrap ?? 0) <= 10, 'sockets do not pile up');
  t.true((hot.Timeout ?? 0) - (warm.Timeout ?? 0) <= 2, 'timers do not pile up');
  t.true(closed, 'back to the baseline once the gateway and the upstreams are closed');
});

test.after.always('no handle is left open when the file ends (ava would report a hang otherwise)', async (t) => {
  // PipeWrap/TTYWrap: the worker's IPC channel and stdio. A server's 'close' comes before its
  // handle is released (the next turn of the loop): the last tests' servers may still be on their way out.
  const left = () => process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap' && r !== 'PipeWrap');
  await waitFor(() => left().length === 0, 5_000);
  t.deepEqual(left(), []);
});
