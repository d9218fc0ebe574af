/**
 * Routing by measured quality (issue 24), on the wire: real fake upstreams, the real pipeline,
 * the default config (strategy `balanced`, adaptive hedging) unless a test says otherwise. The
 * slow upstream answers after 3 s, as in the issue: with the adaptive hedge (the chain's p90 of
 * answered calls, at least timeouts.hedgeMinMs = 20 ms) a call to it costs tens of ms, not 3 s.
 * Latencies are compared as ratios measured within the test, never as absolute times.
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

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** `count` requests one after the other; the latency of each (ms) and the upstream that answered. */
async function run(t: ExecutionContext, gw: Gateway, path: string, count: number): Promise<{ ms: number[]; from: string[] }> {
  const ms: number[] = [];
  const from: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const began = performance.now();
    const reply = await gw.post(path, rpc('eth_getBalance', ['0x00000000000000000000000000000000000000aa', '0x1'], i));
    ms.push(performance.now() - began);
    t.is(reply.status, 200);
    t.truthy(reply.body.result, 'every answer is correct');
    from.push(String(reply.headers['x-forwarded-from']));
  }
  return { ms, from };
}

/** The fake that received the request with JSON-RPC id `id` first, and when each one received it. */
const arrivals = (list: FakeUpstream[], id: number) =>
  list
    .map((f) => ({ f, at: f.requests.find((r) => (r.body as { id?: unknown } | undefined)?.id === id)?.at }))
    .filter((a): a is { f: FakeUpstream; at: number } => a.at !== undefined)
    .sort((a, b) => a.at - b.at);

for (const n of [1, 2]) {
  test.serial(`a slow first upstream stops being asked first within ten requests and the p50 stays within 2× of all-fast (N=${n})`, async (t) => {
    // Two gateways side by side, requests alternating between them so that both see the same
    // load of the machine: `control` keeps five fast upstreams, `gw` gets a slow first one.
    const list = await fakes(t, 5);
    const controlFakes = await fakes(t, 5);
    const gw = await gateway(t, { chains: { 1337: { rpcs: list.map((f) => f.url) } } });
    const control = await gateway(t, { chains: { 1337: { rpcs: controlFakes.map((f) => f.url) } } });
    const path = n === 1 ? '/rpc/1337' : `/confirmations/${n}/rpc/1337`;
    // 20 answered calls: the adaptive hedge delay rests on them (before, it is hedgeMaxMs).
    await run(t, gw, path, 20);
    await run(t, control, path, 20);
    list[0]!.delayMs = SLOW_MS;
    const at = callsOf(list[0]!);
    await run(t, gw, path, 10);
    const inFirstTen = callsOf(list[0]!) - at;
    // Still ranked, it would be asked 2 times (N=1: one in five) or 10 times (N=2: one of the first two).
    t.true(inFirstTen <= (n === 1 ? 2 : 3), `the slow upstream was asked ${inFirstTen} times in the first ten requests`);
    const before = callsOf(list[0]!);
    const slow: number[] = [];
    const fast: number[] = [];
    const from: string[] = [];
    for (let i = 0; i < 100; i += 1) {
      // Which of the two goes first alternates too (the first of a pair may pay for a wake-up).
      if (i % 2 === 1) fast.push(...(await run(t, control, path, 1)).ms);
      const a = await run(t, gw, path, 1);
      slow.push(...a.ms);
      from.push(...a.from);
      if (i % 2 === 0) fast.push(...(await run(t, control, path, 1)).ms);
    }
    const asked = callsOf(list[0]!) - before;
    // Were it still ranked, it would be asked in 20 (N=1) or 100 (N=2) of these 100. N=1: at most
    // one request in 5 s re-measures it. On a machine stalled by other work, fast upstreams that
    // lose races to the stall drop a tier for a moment and hedges reach further down the list:
    // 5 of 100 were seen at a load average of 5, 7 at 9 (still ranked: 20 or 100).
    t.true(asked <= 10, `the slow upstream was asked ${asked} times in the next 100 requests`);
    t.false(from.includes(label(list[0]!)), 'it never answered');
    const ratio = median(slow) / median(fast);
    t.true(ratio < 2, `p50 ${median(slow).toFixed(1)} ms against ${median(fast).toFixed(1)} ms all-fast (×${ratio.toFixed(2)})`);
    const chains = await gw.request('GET', '/chains');
    const [first, ...others] = chains.body[0].upstreams as { quality: { score: number; latency: { read?: { p90Ms: number | null } } } }[];
    // Its calls were abandoned no sooner than the hedge (hedgeMinMs = 20 ms at least): they are in
    // its latency, or in its score (its p50, the score's base, may still be one of the fast
    // answers it gave before it was slowed; an abandoned call counts as an error too), and it
    // scores worst.
    const p90 = first!.quality.latency.read?.p90Ms ?? 0;
    t.true((p90 >= 20 || first!.quality.score >= 20) && others.every((o) => first!.quality.score > o.quality.score), `/chains scores it worst: ${first!.quality.score} (p90 ${p90} ms) against ${others.map((o) => o.quality.score).join(', ')}`);
    const metrics = (await gw.request('GET', '/metrics')).text;
    t.regex(metrics, /omnigate_upstream_score\{chain="1337",upstream="[^"]+"\} \d/);
  });
}

test.serial('a slow upstream fast again gets its share back within one probe round', async (t) => {
  const list = await fakes(t, 5);
  const gw = await gateway(t, { chains: { 1337: { rpcs: list.map((f) => f.url) } } });
  await run(t, gw, '/rpc/1337', 20);
  list[0]!.delayMs = SLOW_MS;
  await run(t, gw, '/rpc/1337', 20);
  let before = callsOf(list[0]!);
  await run(t, gw, '/rpc/1337', 20);
  t.true(callsOf(list[0]!) - before <= 1, 'demoted');
  list[0]!.delayMs = 0;
  await gw.rpc.startHealthChecks().firstRound;
  before = callsOf(list[0]!);
  await run(t, gw, '/rpc/1337', 100);
  const share = callsOf(list[0]!) - before;
  t.true(share >= 17 && share <= 23, `its share of 100 requests over 5 upstreams: ${share}`);
});

for (const [upstreamMs, low, high] of [
  [300, 240, 800],
  // 80 ms is hedgeMinMs (the 5 ms chain's own delay would be tens of ms); seen at the fakes, the
  // gap carries each call's own transit: a first call that took longer to arrive than the hedge
  // made it 39.7 ms of a 40 ms minimum on a loaded run, 30.5 ms on a busier one.
  [5, 60, 300],
] as const) {
  test.serial(`a chain whose upstreams answer in ~${upstreamMs} ms hedges after ${upstreamMs === 5 ? 'tens of ms, never below hedgeMinMs' : `~${upstreamMs} ms`}`, async (t) => {
    const list = await fakes(t, 3);
    for (const f of list) f.delayMs = upstreamMs;
    // hedgeMinMs 80, above the 5 ms chain's p90, so that "never below the minimum" can be seen.
    // hedgeBudget 1: the budget, earned from the first request, must not be what refuses the
    // hedge measured here (the warm-up's calls may spend a 10 % one).
    const gw = await gateway(t, { timeouts: { hedgeMinMs: 80, hedgeBudget: 1 }, chains: { 1337: { rpcs: list.map((f) => f.url) } } });
    // (A block per request: identical requests in flight would share one agreement.)
    const body = (i: number) => rpc('eth_getBalance', ['0x00000000000000000000000000000000000000aa', `0x${(i + 1).toString(16)}`], i);
    // 30 answered calls (the adaptive delay rests on 20 at least), a few at a time.
    for (let i = 0; i < 30; i += 3) await Promise.all([i, i + 1, i + 2].map((k) => gw.post('/rpc/1337', body(k))));
    // Now every upstream takes 1.5 s: the first asked stays quiet past the delay, a second is asked.
    for (const f of list) f.delayMs = 1500;
    const reply = await gw.post('/rpc/1337', body(1000));
    t.is(reply.status, 200);
    const seen = arrivals(list, 1000);
    t.true(seen.length >= 2, 'hedged');
    const gap = seen[1]!.at - seen[0]!.at;
    // Generous bounds: the hedge timer of the gateway, seen from the fakes' arrival times.
    t.true(gap >= low && gap <= high, `the second upstream was asked ${gap.toFixed(1)} ms after the first (expected ${low}–${high})`);
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
  t.true(seen.length >= 2, 'hedged');
  const gap = seen[1]!.at - seen[0]!.at;
  t.true(gap >= 380 && gap <= 900, `the second upstream was asked ${gap.toFixed(1)} ms after the first`);
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
