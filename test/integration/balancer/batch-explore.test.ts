/**
 * Exploration (the `balanced` strategy's turn, at most one N=1 request per chain every
 * `exploreEveryMs`, that asks a measured-slow upstream first) against batches, on the wire: real
 * fake upstreams on port 0 and the pipeline's real stages, composed as rpcPipeline composes them
 * but with selectUpstreams on a clock the test moves (no 5 s wait). An N=1 batch is one upstream
 * request at any time (lib/jsonrpc/README.md, "Batches": its calls go to one upstream as one upstream batch); the
 * exploration turn is never a batch member's: it stays for the next single N=1 request.
 */
import test, { type ExecutionContext } from 'ava';
import connect from 'connect';
import { createMetrics } from '../../../lib/ops/metrics.js';
import { createRegistry } from '../../../lib/upstream/registry.js';
import { eligibilityPolicy } from '../../../lib/verify/eligibility-policy.js';
import { hedgePolicy, hedgeSettings } from '../../../lib/verify/hedge-policy.js';
import { composePolicies } from '../../../lib/verify/loop-policy.js';
import {
  canonicalize, classify, emitHeaders, fetchParallel, parseJsonRpc, rpcErrorHandler, runMembers, selectUpstreams, verify,
} from '../../../middleware/index.js';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream.js';
import { makeConfig, rpc, send, type Reply } from '../../support/gateway.js';
import { serveHandler } from '../../support/stage.js';

const EXPLORE_MS = 5000;
const SLOW_MS = 300;

interface Setup {
  fakes: FakeUpstream[];
  post(body: unknown): Promise<Reply>;
  /** Moves selectUpstreams' clock forward. */
  advance(ms: number): void;
}

async function setup(t: ExecutionContext, count: number): Promise<Setup> {
  const fakes = await Promise.all(Array.from({ length: count }, () => startFakeUpstream()));
  t.teardown(() => Promise.all(fakes.map((f) => f.close())));
  // A fixed 1 s hedge (as test/support/gateway.ts): the slow upstream's 300 ms answers are never hedged.
  const config = makeConfig({ confirmations: 1, timeouts: { hedgeMs: 1000 }, chains: { 1337: { rpcs: fakes.map((f) => f.url) } } });
  const registry = createRegistry(config);
  const metrics = createMetrics(registry);
  let now = 0;
  const app = connect()
    .use(parseJsonRpc({ registry, bodyLimit: config.limits.bodyBytes, maxBatchSize: config.limits.batchSize, maxDepth: config.limits.jsonDepth }))
    .use(
      runMembers([
        classify(),
        selectUpstreams({ sampleEvery: config.disputes.sampleEvery, exploreEveryMs: EXPLORE_MS, clock: () => now }),
        fetchParallel({ upstreamTimeoutMs: config.timeouts.upstreamMs, requestTimeoutMs: config.timeouts.requestMs, maxResponseBytes: config.limits.responseBytes }),
        canonicalize(),
        verify({ metrics, disputes: config.disputes, policy: composePolicies(hedgePolicy(hedgeSettings(config.timeouts)), eligibilityPolicy) }),
      ]) as connect.NextHandleFunction,
    )
    .use(emitHeaders({ redactHeaders: config.redactHeaders, sendMs: config.timeouts.sendMs }) as connect.NextHandleFunction)
    .use(rpcErrorHandler() as connect.ErrorHandleFunction);
  const { url, close } = await serveHandler(app);
  t.teardown(async () => {
    await close();
    await registry.close();
  });
  return {
    fakes,
    post: (body) => send(url, 'POST', '/rpc/1337', JSON.stringify(body), { 'content-type': 'application/json' }),
    advance: (ms) => void (now += ms),
  };
}

const address = (i: number) => `0x${i.toString(16).padStart(40, '0')}`;
const single = (i: number) => rpc('eth_getBalance', [address(i), '0x1'], i);
const batchOf = (from: number, size = 3) => Array.from({ length: size }, (_, k) => single(from + k));
const requests = (fakes: FakeUpstream[]) => fakes.map((f) => f.calls);
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

/** Sends an N=1 batch and asserts it was answered whole and cost ONE upstream request holding every member. */
async function batchIsOneRequest(t: ExecutionContext, s: Setup, from: number, what: string): Promise<number> {
  const before = requests(s.fakes);
  const body = batchOf(from);
  const r = await s.post(body);
  t.is(r.status, 200, r.text);
  t.deepEqual((r.body as { id: number; result?: string }[]).map((m) => [m.id, typeof m.result]), body.map((c) => [c.id, 'string']), what);
  const added = requests(s.fakes).map((n, i) => n - before[i]!);
  t.is(sum(added), 1, `${what}: one upstream request (per upstream: ${added.join(', ')})`);
  const at = added.indexOf(1);
  const sent = s.fakes[at]!.requests.at(-1)!.body as { id: number }[];
  t.deepEqual(Array.isArray(sent) ? sent.map((c) => c.id).sort() : sent, body.map((c) => c.id), `${what}: the batch's calls in it`);
  return at;
}

test('an N=1 batch is one upstream request right after start and after each exploration interval', async (t) => {
  const s = await setup(t, 3);
  await batchIsOneRequest(t, s, 10, 'right after start');
  for (let round = 1; round <= 3; round += 1) {
    s.advance(EXPLORE_MS);
    await batchIsOneRequest(t, s, 10 + 10 * round, `${round * EXPLORE_MS} ms later`);
  }
  // The same with a single request first (it starts the exploration clock).
  t.is((await s.post(single(1))).status, 200);
  s.advance(EXPLORE_MS);
  await batchIsOneRequest(t, s, 100, 'after a single request and one interval');
});

test('with a slow upstream to explore: the batch stays one request on the fast ones, the next single request explores', async (t) => {
  const s = await setup(t, 3);
  const slow = s.fakes[2]!;
  slow.delayMs = SLOW_MS;
  // Singles spread over the three (balanced) until the slow one was measured twice (two slow
  // answers make it slow: lib/upstream/README.md, "Upstream selection"); the clock does not move, so none explores.
  for (let i = 0; i < 30 && slow.calls < 2; i += 1) t.is((await s.post(single(i))).status, 200);
  t.is(slow.calls, 2);
  const measured = slow.calls;
  for (let i = 0; i < 6; i += 1) t.is((await s.post(single(40 + i))).status, 200);
  t.is(slow.calls, measured, 'ranked behind the fast ones: no N=1 request goes there');

  // Exploration is due: the batch does not take the turn (nor split over it).
  s.advance(EXPLORE_MS);
  const at = await batchIsOneRequest(t, s, 50, 'a batch when exploration is due');
  t.not(at, 2, 'on a fast upstream');
  // The next single N=1 request takes it: asked first at the slow upstream, which answers it.
  const explored = await s.post(single(60));
  t.is(explored.status, 200);
  t.is(explored.headers['x-forwarded-from'], slow.url, 'the exploring request asked the slow upstream first');
  t.is(slow.calls, measured + 1);
  // Turn used: the next ones are back on the fast ones, batches included.
  t.not((await s.post(single(61))).headers['x-forwarded-from'], slow.url);
  t.not(await batchIsOneRequest(t, s, 70, 'a batch after the turn'), 2);
  t.is(slow.calls, measured + 1);
});
