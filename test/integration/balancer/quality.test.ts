/**
 * Routing by measured quality (issue 24), on the wire: real fake upstreams, the real pipeline,
 * the default config (strategy `balanced`, adaptive hedging) unless a test says otherwise. The
 * slow upstream answers after 3 s, as in the issue: with the adaptive hedge (the chain's p90 of
 * answered calls, at least timeouts.hedgeMinMs = 20 ms) a call to it costs tens of ms, not 3 s.
 * What is asserted is seen on the wire: which upstream answered, how many calls each fake got and
 * in which order they arrived. How fast the answers come is the bench's to measure, not a test's.
 */
import test, { type ExecutionContext } from 'ava';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream.js';
import { adaptiveHedging, rpc, startGateway, type Gateway } from '../../support/gateway.js';

const SLOW_MS = 3000;

async function fakes(t: ExecutionContext, n: number): Promise<FakeUpstream[]> {
  const list = await Promise.all(Array.from({ length: n }, () => startFakeUpstream()));
  t.teardown(() => Promise.all(list.map((f) => f.close())));
  return list;
}

/** A gateway on the defaults: adaptive hedging (test/support/gateway.ts fixes 1 s otherwise) unless `raw` sets hedgeMs. */
async function gateway(t: ExecutionContext, raw: Record<string, unknown>): Promise<Gateway> {
  const timeouts = { ...adaptiveHedging, ...(raw.timeouts as object | undefined) };
  const gw = await startGateway({ refreshInterval: 3600, ...raw, timeouts });
  t.teardown(() => gw.close());
  return gw;
}

/** Calls of a method a fake received (probes ask eth_chainId and eth_blockNumber: not counted). */
const callsOf = (f: FakeUpstream, method = 'eth_getBalance') =>
  f.requests.filter((r) => (r.body as { method?: string } | undefined)?.method === method).length;

/** The upstream as X-Forwarded-From names it (the normalized URL; no key to mask). */
const label = (f: FakeUpstream) => f.url;

/** `count` requests one after the other; the upstream that answered each. */
async function run(t: ExecutionContext, gw: Gateway, path: string, count: number): Promise<{ from: string[] }> {
  const from: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const reply = await gw.post(path, rpc('eth_getBalance', ['0x00000000000000000000000000000000000000aa', '0x1'], i));
    t.is(reply.status, 200);
    t.truthy(reply.body.result, 'every answer is correct');
    from.push(String(reply.headers['x-forwarded-from']));
  }
  return { from };
}

/** The fake that received the request with JSON-RPC id `id` first, and when each one received it. */
const arrivals = (list: FakeUpstream[], id: number) =>
  list
    .map((f) => ({ f, at: f.requests.find((r) => (r.body as { id?: unknown } | undefined)?.id === id)?.at }))
    .filter((a): a is { f: FakeUpstream; at: number } => a.at !== undefined)
    .sort((a, b) => a.at - b.at);

for (const n of [1, 2]) {
  test.serial(`a slow first upstream stops being asked first within ten requests and answers none of the next hundred (N=${n})`, async (t) => {
    const list = await fakes(t, 5);
    const gw = await gateway(t, { chains: { 1337: { rpcs: list.map((f) => f.url) } } });
    const path = n === 1 ? '/rpc/1337' : `/confirmations/${n}/rpc/1337`;
    // 20 answered calls: the adaptive hedge delay rests on them (before, it is hedgeMaxMs).
    await run(t, gw, path, 20);
    list[0]!.delayMs = SLOW_MS;
    const at = callsOf(list[0]!);
    await run(t, gw, path, 10);
    const inFirstTen = callsOf(list[0]!) - at;
    // Still ranked, it would be asked 2 times (N=1: one in five) or 10 times (N=2: one of the first two).
    t.true(inFirstTen <= (n === 1 ? 2 : 3), `the slow upstream was asked ${inFirstTen} times in the first ten requests`);
    const before = callsOf(list[0]!);
    const { from } = await run(t, gw, path, 100);
    const asked = callsOf(list[0]!) - before;
    // Were it still ranked, it would be asked in 20 (N=1) or 100 (N=2) of these 100. N=1: at most
    // one request in 5 s re-measures it. On a machine stalled by other work, fast upstreams that
    // lose races to the stall drop a tier for a moment and hedges reach further down the list:
    // 5 of 100 were seen at a load average of 5, 7 at 9 (still ranked: 20 or 100).
    t.true(asked <= 10, `the slow upstream was asked ${asked} times in the next 100 requests`);
    // Every answer came from a fast upstream: none waited for the slow one's 3 s.
    t.false(from.includes(label(list[0]!)), 'it never answered');
    const chains = await gw.request('GET', '/chains');
    const [first, ...others] = chains.body[0].upstreams as { slow: string[]; state: string; quality: { score: number; latency: { read?: { p90Ms: number | null } } } }[];
    // Why it gets no traffic, while its state stays healthy: the ranking puts it behind as slow for
    // reads (for every class too when its latency average, answers included, is what shows it).
    t.is(first!.state, 'healthy');
    t.true(first!.slow.includes('read'), JSON.stringify(first));
    t.true(others.every((o) => o.slow.length === 0), 'the others are not slow');
    // Its calls were abandoned no sooner than the hedge (hedgeMinMs = 20 ms at least): they are in
    // its latency, or in its score (its p50, the score's base, may still be one of the fast
    // answers it gave before it was slowed; an abandoned call counts as an error too), and it
    // scores worst.
    const p90 = first!.quality.latency.read?.p90Ms ?? 0;
    t.true((p90 >= 20 || first!.quality.score >= 20) && others.every((o) => first!.quality.score > o.quality.score), `/chains scores it worst: ${first!.quality.score} (p90 ${p90} ms) against ${others.map((o) => o.quality.score).join(', ')}`);
    const metrics = (await gw.request('GET', '/metrics')).text;
    t.regex(metrics, /omnigate_upstream_score\{chain="1337",upstream="[^"]+"\} \d/);
    // The same view in /metrics: the slowed upstream's read series 1, the others' 0.
    const slowRead = (f: FakeUpstream) => new RegExp(`^omnigate_upstream_slow\\{chain="1337",upstream="${label(f).replace(/[.]/g, '\\.')}",class="read"\\} (\\d)$`, 'm').exec(metrics)?.[1];
    t.deepEqual(list.map(slowRead), ['1', '0', '0', '0', '0']);
  });
}

/**
 * The answers of the first fake in `count` requests. Back in the rotation, it gets its turn of
 * the round-robin like its peers: about 20 of 100 over 5. On a loaded machine a stall of two
 * answers drops any of the five a tier until the next explore request (every 5 s) re-measures it,
 * and the others share its turns meanwhile: 26 of 100 were seen under 3 busy loops (and 4, once,
 * at a load average of 15, past what this bound allows). Kept out of the rotation, it is asked by
 * explore requests only, one every 5 s: 0 or 1 of 100. Asked first every time (a bug of the other
 * kind), 100.
 */
async function shareOfFirst(t: ExecutionContext, gw: Gateway, list: FakeUpstream[], count: number): Promise<number> {
  const { from } = await run(t, gw, '/rpc/1337', count);
  return from.filter((u) => u === label(list[0]!)).length;
}

test.serial('a slow upstream fast again gets its share back within one probe round', async (t) => {
  const list = await fakes(t, 5);
  const gw = await gateway(t, { chains: { 1337: { rpcs: list.map((f) => f.url) } } });
  await run(t, gw, '/rpc/1337', 20);
  list[0]!.delayMs = SLOW_MS;
  await run(t, gw, '/rpc/1337', 20);
  const before = callsOf(list[0]!);
  await run(t, gw, '/rpc/1337', 20);
  // An explore request, and on a stalled machine a hedge reaching down the list, may ask it.
  t.true(callsOf(list[0]!) - before <= 2, 'demoted');
  list[0]!.delayMs = 0;
  await gw.rpc.startHealthChecks().firstRound;
  const share = await shareOfFirst(t, gw, list, 100);
  t.true(share >= 10 && share <= 40, `its share of 100 requests over 5 upstreams: ${share}`);
});

// The hedge delay, seen from the fakes: the second call arrives no sooner than the delay after the
// first, less the first call's own transit, which may have taken longer than the second's (on a
// loaded machine a late first arrival has cut the gap below the minimum): hence the margin under
// each delay. That a hedge went out at all, while the first call's upstream holds its answer for 1.5 s
// with hedgeMaxMs far above that, shows the delay was the chain's measured one, not the maximum:
// the gateway's hedge timer and the fake's answer timer run on one clock and fire in deadline
// order however loaded the machine is.
for (const [upstreamMs, low] of [
  [300, 240],
  // 80 ms is hedgeMinMs (the 5 ms chain's own delay would be tens of ms).
  [5, 60],
] as const) {
  test.serial(`a chain whose upstreams answer in ~${upstreamMs} ms hedges after ${upstreamMs === 5 ? 'tens of ms, never below hedgeMinMs' : `~${upstreamMs} ms`}`, async (t) => {
    const list = await fakes(t, 3);
    for (const f of list) f.delayMs = upstreamMs;
    // hedgeMinMs 80, above the 5 ms chain's p90, so that "never below the minimum" can be seen.
    // hedgeMaxMs 10 s, far above the 1.5 s the upstreams take below: a delay stuck at the maximum
    // would hedge nothing. hedgeBudget 1: the budget, earned from the first request, must not be
    // what refuses the hedge measured here (the warm-up's calls may spend a 10 % one).
    const gw = await gateway(t, { timeouts: { hedgeMinMs: 80, hedgeMaxMs: 10_000, hedgeBudget: 1 }, chains: { 1337: { rpcs: list.map((f) => f.url) } } });
    // (A block per request: identical requests in flight would share one agreement.)
    const body = (i: number) => rpc('eth_getBalance', ['0x00000000000000000000000000000000000000aa', `0x${(i + 1).toString(16)}`], i);
    // 30 answered calls (the adaptive delay rests on 20 at least), a few at a time.
    for (let i = 0; i < 30; i += 3) await Promise.all([i, i + 1, i + 2].map((k) => gw.post('/rpc/1337', body(k))));
    // Now every upstream takes 1.5 s: the first asked stays quiet past the delay, a second is asked.
    for (const f of list) f.delayMs = 1500;
    const reply = await gw.post('/rpc/1337', body(1000));
    t.is(reply.status, 200);
    const seen = arrivals(list, 1000);
    t.true(seen.length >= 2, 'hedged before the first asked answered: the measured delay, not hedgeMaxMs');
    const gap = seen[1]!.at - seen[0]!.at;
    t.true(gap >= low, `the second upstream was asked ${gap.toFixed(1)} ms after the first (expected ${low} ms at least)`);
  });
}

test.serial('timeouts.hedgeMs set is a fixed delay, whatever the chain answers in', async (t) => {
  const list = await fakes(t, 3);
  const gw = await gateway(t, { timeouts: { hedgeMs: 400 }, chains: { 1337: { rpcs: list.map((f) => f.url) } } });
  const body = (i: number) => rpc('eth_getBalance', ['0x00000000000000000000000000000000000000aa', '0x1'], i);
  await run(t, gw, '/rpc/1337', 30); // ~1 ms answers: adaptive would hedge after 20 ms
  for (const f of list) f.delayMs = 1500;
  t.is((await gw.post('/rpc/1337', body(1000))).status, 200);
  const seen = arrivals(list, 1000);
  t.true(seen.length >= 2, 'hedged before the first asked answered');
  const gap = seen[1]!.at - seen[0]!.at;
  t.true(gap >= 380, `the second upstream was asked ${gap.toFixed(1)} ms after the first: the fixed 400 ms, not the adaptive 20`);
});

test.serial('four equal upstreams share N=1 load within ±15 % of equal (balanced, the default); priority keeps the first', async (t) => {
  const list = await fakes(t, 4);
  // A fixed hedge: this test counts each fake's calls against the answers it gave, and an
  // adaptive hedge (20 ms here) on a loaded machine adds calls that answer nothing.
  const gw = await gateway(t, { timeouts: { hedgeMs: 1000 }, chains: { 1337: { rpcs: list.map((f) => f.url) } } });
  const { from } = await run(t, gw, '/rpc/1337', 200);
  for (const f of list) {
    const share = from.filter((u) => u === label(f)).length;
    t.true(share >= 50 * 0.85 && share <= 50 * 1.15, `${f.url}: ${share} of 200`);
    t.is(callsOf(f), share, 'X-Forwarded-From names the upstream that answered');
  }
  const prio = await gateway(t, { chains: { 1337: { strategy: 'priority', rpcs: list.map((f) => f.url) } } });
  const ordered = await run(t, prio, '/rpc/1337', 20);
  t.deepEqual(new Set(ordered.from), new Set([label(list[0]!)]));
});

test.serial('weights 3:1 give 3:1', async (t) => {
  const list = await fakes(t, 2);
  const gw = await gateway(t, { timeouts: { hedgeMs: 1000 }, chains: { 1337: { rpcs: [{ url: list[0]!.url, weight: 3 }, { url: list[1]!.url, weight: 1 }] } } });
  await run(t, gw, '/rpc/1337', 200);
  const [a, b] = list.map((f) => callsOf(f));
  t.true(a! >= 150 * 0.85 && a! <= 150 * 1.15 && b! >= 50 * 0.85 && b! <= 50 * 1.15, `${a} : ${b}`);
});

test.serial('an upstream at its cap is skipped, not failed', async (t) => {
  const list = await fakes(t, 2);
  list[0]!.delayMs = 300;
  const gw = await gateway(t, { chains: { 1337: { strategy: 'priority', rpcs: [{ url: list[0]!.url, maxConcurrent: 1 }, list[1]!.url] } } });
  // (A block per request: identical requests in flight would share one agreement.)
  const body = (i: number) => rpc('eth_getBalance', ['0x00000000000000000000000000000000000000aa', `0x${(i + 1).toString(16)}`], i);
  // The first takes the capped upstream's one slot; the others, sent meanwhile, are skipped to the second.
  const first = gw.post('/rpc/1337', body(0));
  await new Promise<void>((resolve) => {
    const check = () => (list[0]!.calls > 0 ? resolve() : setImmediate(check));
    check();
  });
  const rest = await Promise.all([1, 2, 3].map((i) => gw.post('/rpc/1337', body(i))));
  for (const r of rest) {
    t.is(r.status, 200);
    t.is(r.headers['x-forwarded-from'], label(list[1]!));
  }
  t.is((await first).headers['x-forwarded-from'], label(list[0]!));
  t.is(callsOf(list[0]!), 1);
  t.is(callsOf(list[1]!), 3);
});
