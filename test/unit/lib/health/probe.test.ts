/**
 * Active health checks over fake transports: a probe's chain id and head, a failed probe counted
 * with its reason scrubbed, an upstream on another chain out of rotation and back, a loop never
 * probed, the heads and lag refreshed, at most `concurrency` upstreams at once.
 */
import test from 'ava';
import type { RpcCall } from '../../../../lib/jsonrpc/types.js';
import { probeChain, probeUpstream, startProber } from '../../../../lib/health/probe.js';
import type { Registry } from '../../../../lib/upstream/registry.js';
import { testChain, testUpstream } from '../../../support/stage.js';

const node = (chainId: string, head: string) => (call: RpcCall) => (call.method === 'eth_chainId' ? chainId : head);

test('probeUpstream should read the chain id and the head', async (t) => {
  const r = await probeUpstream(testUpstream(0, { answer: node('0x1', '0x64') }), 1000);
  t.is(r.chainId, 1n);
  t.is(r.head, 100n);
  t.is(r.error, undefined);
});

test('probeUpstream should give a scrubbed reason for a failure or an answer that is no quantity', async (t) => {
  const leaky = { ...testUpstream(0, { answer: () => new Error('refused by http://u0.test/KEY0') }), secrets: { scrub: (s: string) => s.replaceAll('KEY0', '***'), echoedIn: () => false } };
  t.is((await probeUpstream(leaky, 1000)).error, 'refused by http://u0.test/***');
  t.regex((await probeUpstream(testUpstream(0, { answer: () => null }), 1000)).error ?? '', /unexpected answer null/);
});

test('probeChain should record successes and heads, count failures, and refresh each lag', async (t) => {
  const chain = testChain([
    testUpstream(0, { answer: node('0x1', '0x64') }),
    testUpstream(1, { answer: node('0x1', '0x60') }),
    testUpstream(2, { answer: () => new Error('ECONNREFUSED') }),
  ]);
  await probeChain(chain, 1000);
  const [a, b, c] = chain.upstreams.map((u) => u.health);
  t.like(a, { successes: 1, head: 100n, lag: 0, wrongChainId: undefined });
  t.like(b, { successes: 1, head: 96n, lag: 4 });
  t.like(c, { failures: 1, lastError: 'probe: ECONNREFUSED' });
  t.true(a!.lastProbeAt > 0 && c!.lastProbeAt > 0);
});

test('probeChain should take an upstream of another chain out of rotation, and back when it serves the chain again', async (t) => {
  let chainId = '0xa';
  const u = testUpstream(0, { answer: (call) => (call.method === 'eth_chainId' ? chainId : '0x1') });
  const chain = testChain([u]);
  await probeChain(chain, 1000);
  t.is(u.health.wrongChainId, '10');
  t.is(u.health.successes, 0);
  chainId = '0x1';
  await probeChain(chain, 1000);
  t.is(u.health.wrongChainId, undefined);
  t.is(u.health.successes, 1);
});

test('probeChain should never probe an upstream found to be a loop', async (t) => {
  const u = testUpstream(0, { health: { loop: true } });
  await probeChain(testChain([u]), 1000);
  t.is(u.sent.length, 0);
  t.is(u.health.lastProbeAt, 0);
});

test.serial('probeUpstream should ask the chain id, then the head on the connection kept open for it, and time the head\'s call alone', async (t) => {
  // A clock the fake transport moves: the first call pays a new connection (1,000 ms), the
  // second finds it warm (7 ms). performance.now is put back whatever happens.
  let clock = 0;
  const now = performance.now;
  performance.now = () => clock;
  t.teardown(() => void (performance.now = now));
  const u = testUpstream(0);
  const seen: { method: string; keepOpen: unknown; background: unknown; inFlight: number }[] = [];
  let inFlight = 0;
  (u.transport as { send: unknown }).send = async (request: { payload: { calls: RpcCall[] }; keepOpen?: boolean; background?: boolean }) => {
    const method = request.payload.calls[0]!.method;
    inFlight += 1;
    seen.push({ method, keepOpen: request.keepOpen, background: request.background, inFlight });
    await new Promise((resolve) => setImmediate(resolve));
    clock += method === 'eth_chainId' ? 1_000 : 7;
    inFlight -= 1;
    return { body: Buffer.from(`{"jsonrpc":"2.0","id":1,"result":"${method === 'eth_chainId' ? '0x1' : '0x5'}"}`) };
  };
  const r = await probeUpstream(u, 5_000);
  t.is(r.chainId, 1n);
  t.is(r.head, 5n);
  t.is(r.ms, 7, 'the warm call, not the connection');
  t.deepEqual(seen, [
    { method: 'eth_chainId', keepOpen: true, background: true, inFlight: 1 },
    { method: 'eth_blockNumber', keepOpen: false, background: true, inFlight: 1 },
  ]);
});

test('probeUpstream should let the kept connection go when it stops at the chain id, and leave the decision to the head\'s call otherwise', async (t) => {
  const cases: { name: string; chainId: string; head: string; releases: number; error: boolean }[] = [
    { name: 'an error answer to the chain id', chainId: '"error":{"code":-32601,"message":"no"}', head: '"result":"0x5"', releases: 1, error: true },
    { name: 'an unreadable chain id', chainId: '"result":"one"', head: '"result":"0x5"', releases: 1, error: true },
    { name: 'a failed head call', chainId: '"result":"0x1"', head: '"error":{"code":-32000,"message":"busy"}', releases: 0, error: true },
    { name: 'both answered', chainId: '"result":"0x1"', head: '"result":"0x5"', releases: 0, error: false },
  ];
  for (const c of cases) {
    const u = testUpstream(0);
    const methods: string[] = [];
    let releases = 0;
    (u.transport as { send: unknown }).send = async (request: { payload: { calls: RpcCall[] } }) => {
      const method = request.payload.calls[0]!.method;
      methods.push(method);
      return { body: Buffer.from(`{"jsonrpc":"2.0","id":1,${method === 'eth_chainId' ? c.chainId : c.head}}`) };
    };
    (u.transport as { releaseKept: unknown }).releaseKept = () => {
      releases += 1;
    };
    const r = await probeUpstream(u, 5_000);
    t.is(r.error !== undefined, c.error, c.name);
    t.is(releases, c.releases, c.name);
    t.deepEqual(methods, c.releases === 1 ? ['eth_chainId'] : ['eth_chainId', 'eth_blockNumber'], c.name);
  }
});

test('probeChain should probe at most `concurrency` upstreams at once', async (t) => {
  let running = 0;
  let most = 0;
  const upstreams = [0, 1, 2, 3].map((i) => {
    const u = testUpstream(i);
    (u.transport as { send: unknown }).send = async (request: { payload: { calls: RpcCall[] } }) => {
      running += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setImmediate(resolve));
      running -= 1;
      return { body: Buffer.from(`{"jsonrpc":"2.0","id":1,"result":"${request.payload.calls[0]!.method === 'eth_chainId' ? '0x1' : '0x5'}"}`) };
    };
    return u;
  });
  await probeChain(testChain(upstreams), 1000, undefined, 2);
  t.is(most, 2, 'two upstreams, one call at a time each');
  t.true(upstreams.every((u) => u.health.successes === 1));
});

test('startProber should probe every chain in its first round, and stop', async (t) => {
  const one = testUpstream(0, { answer: node('0x1', '0x1') });
  const ten = { ...testUpstream(1, { answer: node('0xa', '0x2') }), chainId: '10' };
  const registry: Registry = {
    chains: new Map([['1', testChain([one])], ['10', testChain([ten], { id: '10' })]]),
    loopThrough: () => undefined,
    close: async () => {},
  };
  const prober = startProber(registry, { intervalSeconds: 3600, timeoutMs: 30_000 });
  await prober.firstRound;
  prober.stop();
  t.is(one.health.successes, 1);
  t.is(ten.health.successes, 1);
  t.is(ten.health.head, 2n);
});

test('probeChain should put a rate-limited upstream on back-off, not count a failure, and not probe it again until the back-off ends', async (t) => {
  let calls = 0;
  const limited = testUpstream(0, {
    answer: () => {
      calls += 1;
      return Object.assign(new Error('HTTP 429'), { kind: 'rate-limited', retryAfterMs: 30_000 });
    },
  });
  const chain = testChain([limited, testUpstream(1, { answer: node('0x1', '0x64') })]);
  await probeChain(chain, 1000);
  const h = limited.health;
  t.like(h, { failures: 0, consecutiveFailures: 0, rateLimits: 1, rateLimitEpisodes: 1, lastError: 'probe: HTTP 429' });
  t.true(h.rateLimitedUntil > Date.now() + 20_000);
  const asked = calls;
  await probeChain(chain, 1000);
  t.is(calls, asked, 'not probed during its back-off');
  t.is(h.rateLimits, 1);
  h.rateLimitedUntil = Date.now() - 1;
  await probeChain(chain, 1000);
  t.true(calls > asked, 'probed again once it ended');
});
