/**
 * A provider's rate limits, on the wire: an upstream answering HTTP 429 (with or without
 * Retry-After) or a JSON-RPC rate-limit error is put on back-off: the next requests do not call
 * it (call counts) and are answered by the others; it is no failure (/chains), it is logged once
 * per episode with its URL redacted, counted in /metrics, and asked again once the back-off ends;
 * without a Retry-After the back-off doubles with each episode.
 */
import test, { type ExecutionContext } from 'ava';
import type { Logger } from '../../../lib/log.js';
import { startFakeUpstream, type FakeOptions, type FakeUpstream } from '../../support/fake-upstream.js';
import { rpc, startGateway, type Gateway } from '../../support/gateway.js';
import { until as waitUntil } from '../../support/wait.js';

const KEY = '0123456789abcdef0123456789abcdef';
const ADDRESS = '0x00000000000000000000000000000000000000aa';

function recorder(): { logger: Logger; lines: { msg: string; obj: Record<string, unknown> }[] } {
  const lines: { msg: string; obj: Record<string, unknown> }[] = [];
  const log = (obj: unknown, msg?: string) => lines.push(typeof obj === 'string' ? { msg: obj, obj: {} } : { msg: msg ?? '', obj: obj as Record<string, unknown> });
  const logger = { debug: log, info: log, warn: log, error: log, child: () => logger } as unknown as Logger;
  return { logger, lines };
}

/** Three upstreams, the first one (`limited`, its key in its path) the first asked (`priority`). */
async function setup(t: ExecutionContext, limited: FakeOptions['http']): Promise<{ gw: Gateway; list: FakeUpstream[]; lines: ReturnType<typeof recorder>['lines'] }> {
  const list = await Promise.all([startFakeUpstream({ path: `/v3/${KEY}`, http: limited }), startFakeUpstream(), startFakeUpstream()]);
  t.teardown(() => Promise.all(list.map((f) => f.close())));
  const { logger, lines } = recorder();
  const gw = await startGateway({ chains: { 1337: { rpcs: list.map((f) => f.url), strategy: 'priority' } } }, { logger });
  t.teardown(() => gw.close());
  return { gw, list, lines };
}

const balance = (gw: Gateway, id: number, n = 1) => gw.post(n === 1 ? '/rpc/1337' : `/confirmations/${n}/rpc/1337`, rpc('eth_getBalance', [ADDRESS, '0x10'], id));

async function upstreamState(gw: Gateway, fake: FakeUpstream): Promise<Record<string, unknown>> {
  const chains = (await gw.request('GET', '/chains')).body as { upstreams: Record<string, unknown>[] }[];
  const port = new URL(fake.url).port;
  return chains[0]!.upstreams.find((u) => String(u.url).includes(`:${port}/`) || String(u.url).endsWith(`:${port}`))!;
}

const until = (ok: () => boolean | Promise<boolean>, ms = 70_000) => waitUntil(ok, ms, 50);

const warnings = (lines: ReturnType<typeof recorder>['lines']) => lines.filter((l) => l.msg.startsWith('upstream rate-limited us'));

test('HTTP 429 with Retry-After: the upstream is not called again within the window, the others answer; no failure; logged once, redacted; counted', async (t) => {
  const { gw, list, lines } = await setup(t, () => ({ status: 429, headers: { 'retry-after': '30' }, body: '{"error":"too many requests"}' }));
  const [limited, b] = list as [FakeUpstream, FakeUpstream, FakeUpstream];
  const first = await balance(gw, 1);
  t.is(first.status, 200, first.text);
  t.is(limited.calls, 1, 'asked first, answered 429');
  t.is(first.headers['x-forwarded-from'], b.url, 'the call moved on to the next upstream');
  for (let i = 2; i <= 6; i++) {
    const r = await balance(gw, i);
    t.is(r.status, 200, r.text);
    t.is(r.headers['x-forwarded-from'], b.url);
  }
  const confirmed = await balance(gw, 7, 2);
  t.is(confirmed.status, 200, confirmed.text);
  t.false(String(confirmed.headers['x-checked-urls']).includes(new URL(limited.url).port), 'N=2 from the two others');
  t.is(limited.calls, 1, 'not called again within its Retry-After');
  const state = await upstreamState(gw, limited);
  t.is(state.state, 'rate-limited');
  t.is(typeof state.rateLimitedUntil, 'string');
  const until = Date.parse(state.rateLimitedUntil as string);
  t.true(until > Date.now() + 20_000 && until <= Date.now() + 30_000, 'the Retry-After of 30 s');
  t.is(state.rateLimits, 1);
  t.is(state.failures, 0, 'a rate limit is no failure');
  t.is(state.consecutiveFailures, 0);
  t.is(warnings(lines).length, 1, 'one warning for the episode');
  const logged = JSON.stringify(lines);
  t.false(logged.includes(KEY), 'no key in the logs');
  t.true(String(warnings(lines)[0]!.obj.upstream).includes('***'), 'the URL redacted');
  const metrics = (await gw.request('GET', '/metrics')).text;
  t.false(metrics.includes(KEY));
  t.regex(metrics, /omnigate_upstream_rate_limited_total\{chain="1337",upstream="http:\/\/127\.0\.0\.1:\d+\/v3\/\*\*\*"\} 1/);
  t.regex(metrics, /omnigate_upstream_rate_limited\{chain="1337",upstream="http:\/\/127\.0\.0\.1:\d+\/v3\/\*\*\*"\} 1/);
  t.false(JSON.stringify((await gw.request('GET', '/chains')).body).includes(KEY));
});

test('503 with Retry-After is a rate limit too; a 503 without one is a failure', async (t) => {
  const { gw, list } = await setup(t, () => ({ status: 503, headers: { 'retry-after': 'Wed, 21 Oct 2099 07:28:00 GMT' } }));
  const [limited] = list as [FakeUpstream, FakeUpstream, FakeUpstream];
  t.is((await balance(gw, 1)).status, 200);
  t.is((await balance(gw, 2)).status, 200);
  t.is(limited.calls, 1);
  const limitedState = await upstreamState(gw, limited);
  t.is(limitedState.state, 'rate-limited');
  t.true(Date.parse(limitedState.rateLimitedUntil as string) <= Date.now() + 60_000, 'an HTTP date, capped at 60 s');

  const other = await setup(t, () => ({ status: 503 }));
  t.is((await balance(other.gw, 1)).status, 200);
  const state = await upstreamState(other.gw, other.list[0]!);
  t.is(state.failures, 1);
  t.is(state.rateLimits, 0);
});

test('after its Retry-After the upstream is asked again', async (t) => {
  let limiting = true;
  const { gw, list } = await setup(t, () => (limiting ? { status: 429, headers: { 'retry-after': '1' } } : undefined));
  const [limited] = list as [FakeUpstream, FakeUpstream, FakeUpstream];
  t.is((await balance(gw, 1)).status, 200);
  t.is(limited.calls, 1);
  limiting = false;
  await until(async () => (await upstreamState(gw, limited)).rateLimitedUntil === null);
  const again = await balance(gw, 2);
  t.is(again.status, 200);
  t.is(limited.calls, 2, 'asked again once the back-off ended');
  t.is(again.headers['x-forwarded-from'], limited.url.replace(KEY, '***'));
  const state = await upstreamState(gw, limited);
  t.is(state.state, 'healthy');
  t.is(state.rateLimitEpisodes, 0, 'a success ends the streak');
});

test('a JSON-RPC rate-limit error in an HTTP 200 puts the upstream on back-off too', async (t) => {
  const list = await Promise.all([
    startFakeUpstream({ answer: () => ({ error: { code: -32005, message: 'daily request count exceeded, request rate limited' } }) }),
    startFakeUpstream(),
    startFakeUpstream(),
  ]);
  t.teardown(() => Promise.all(list.map((f) => f.close())));
  const { logger, lines } = recorder();
  const gw = await startGateway({ chains: { 1337: { rpcs: list.map((f) => f.url), strategy: 'priority' } } }, { logger });
  t.teardown(() => gw.close());
  const [limited, b] = list as [FakeUpstream, FakeUpstream, FakeUpstream];
  const first = await balance(gw, 1);
  t.is(first.status, 200, first.text);
  t.is(first.headers['x-forwarded-from'], b.url);
  // Right after: within the first episode's back-off (1 s).
  const next = await Promise.all([balance(gw, 2), balance(gw, 3), balance(gw, 4)]);
  t.true(next.every((r) => r.status === 200 && r.headers['x-forwarded-from'] === b.url));
  t.is(limited.calls, 1, 'not called within the back-off');
  const state = await upstreamState(gw, limited);
  t.is(state.failures, 0);
  t.is(state.rateLimits, 1);
  t.regex(String(state.lastError), /^rate limited -32005: daily request count exceeded/);
  t.is(warnings(lines).length, 1);
});

test('without a Retry-After the back-off doubles with each episode, up to a success', async (t) => {
  let limiting = true;
  const { gw, list } = await setup(t, () => (limiting ? { status: 429 } : undefined));
  const [limited] = list as [FakeUpstream, FakeUpstream, FakeUpstream];
  for (let episode = 1; episode <= 3; episode++) {
    const before = Date.now();
    t.is((await balance(gw, episode)).status, 200);
    const after = Date.now();
    t.is(limited.calls, episode, `asked once in episode ${episode}`);
    const state = await upstreamState(gw, limited);
    t.is(state.rateLimitEpisodes, episode);
    const until = Date.parse(state.rateLimitedUntil as string);
    // The back-off began between `before` and `after`: its length lies within these bounds.
    t.true(until - before >= 1000 * 2 ** (episode - 1), `episode ${episode}: at least ${2 ** (episode - 1)} s`);
    t.true(until - after <= 1000 * 2 ** (episode - 1), `episode ${episode}: at most ${2 ** (episode - 1)} s`);
    await until_(gw, limited);
  }
  limiting = false;
  t.is((await balance(gw, 9)).status, 200);
  t.is(limited.calls, 4);
  const state = await upstreamState(gw, limited);
  t.is(state.rateLimitEpisodes, 0);
  t.is(state.rateLimits, 3);
  t.is(state.failures, 0);
});

/** Waits for the upstream's back-off to end. */
const until_ = (gw: Gateway, fake: FakeUpstream) => until(async () => (await upstreamState(gw, fake)).rateLimitedUntil === null);

test('a request in flight whose next candidate was put on back-off meanwhile asks the others first', async (t) => {
  // u0 fails slowly (HTTP 500 after 1 s); u1 answers 429; u2 answers. No hedging.
  const list = await Promise.all([
    startFakeUpstream({ profile: 'error500', delayMs: 1000 }),
    startFakeUpstream({ http: () => ({ status: 429, headers: { 'retry-after': '30' } }) }),
    startFakeUpstream(),
  ]);
  t.teardown(() => Promise.all(list.map((f) => f.close())));
  const gw = await startGateway({ timeouts: { hedgeMs: 0 }, chains: { 1337: { rpcs: list.map((f) => f.url), strategy: 'priority' } } });
  t.teardown(() => gw.close());
  const [slow, limited, third] = list as [FakeUpstream, FakeUpstream, FakeUpstream];
  // N=1: ranked u0, u1, u2; waits on u0.
  const inFlight = balance(gw, 1);
  // N=2 meanwhile: u0 and u1 at once; u1's 429 puts it on back-off.
  await until(async () => slow.calls === 1);
  const verified = balance(gw, 2, 2);
  await until(async () => limited.calls === 1);
  const [first, second] = await Promise.all([inFlight, verified]);
  t.is(first.status, 200, first.text);
  t.is(first.headers['x-forwarded-from'], third.url, 'u0 failed: the missing vote went to u2, not to u1 on back-off');
  t.is(limited.calls, 1, 'u1 was not asked again');
  t.is(second.status, 502, 'N=2 with u0 failing and u1 on back-off: one vote');
});

test("a failure's data names the upstreams left out for a rate limit, with the seconds left of their back-off", async (t) => {
  // u0 answers 429 (Retry-After: 30); u1 fails (HTTP 500); u2 answers. Priority order, no hedging.
  const list = await Promise.all([
    startFakeUpstream({ http: () => ({ status: 429, headers: { 'retry-after': '30' } }) }),
    startFakeUpstream({ profile: 'error500' }),
    startFakeUpstream(),
  ]);
  t.teardown(() => Promise.all(list.map((f) => f.close())));
  const gw = await startGateway({ timeouts: { hedgeMs: 0 }, chains: { 1337: { rpcs: list.map((f) => f.url), strategy: 'priority' } } });
  t.teardown(() => gw.close());
  const [limited, failing] = list as [FakeUpstream, FakeUpstream, FakeUpstream];
  // N=1 meets u0's 429 (u0 on back-off) and is answered by another.
  const first = await balance(gw, 1);
  t.is(first.status, 200, first.text);
  t.is((await upstreamState(gw, limited)).state, 'rate-limited');
  const before = limited.calls;
  // N=2: u1 and u2 still hold two providers, so u0 is left out; u1 fails: one vote, a 502.
  const second = await balance(gw, 2, 2);
  t.is(second.status, 502, second.text);
  t.is(limited.calls, before, 'u0 was not asked during its back-off');
  t.true(failing.calls >= 1);
  const data = (second.body as { error: { data: { failures: { upstream: string }[]; rateLimited?: { upstream: string; retryAfter: number }[] } } }).error.data;
  t.deepEqual(data.failures.map((f) => f.upstream), [failing.url]);
  t.is(data.rateLimited?.length, 1);
  t.is(data.rateLimited![0]!.upstream, limited.url);
  t.true(data.rateLimited![0]!.retryAfter > 0 && data.rateLimited![0]!.retryAfter <= 30, `retryAfter ${data.rateLimited![0]!.retryAfter}`);
  // An answer that succeeds says nothing of it.
  const third = await balance(gw, 3);
  t.is(third.status, 200, third.text);
});
