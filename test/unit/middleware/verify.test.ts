/**
 * The fetch → canonicalize → verify stages composed by hand, as a user of the stage factories
 * would, over fake upstream transports: the agreement loop behind them, and verify's per-request
 * policy option.
 */
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import test from 'ava';
import { compose } from '../../../lib/pipeline/compose.js';
import { initContext, type RpcContext } from '../../../lib/pipeline/context.js';
import { silentLogger } from '../../../lib/log.js';
import { newHealth } from '../../../lib/health/health.js';
import type { Chain, Upstream } from '../../../lib/upstream/registry.js';
import type { UpstreamResponse } from '../../../lib/upstream/transport/contract.js';
import { canonicalize } from '../../../middleware/canonicalize.js';
import { fetchParallel } from '../../../middleware/fetch-parallel.js';
import { verify, type VerifyOptions } from '../../../middleware/verify.js';

/** Upstreams answering `result` (or failing) at once, counting their calls. */
function upstreams(results: (string | Error)[]) {
  const calls = results.map(() => 0);
  const list = results.map(
    (result, index): Upstream => ({
      chainId: '1', index, url: `http://u${index}/`, label: `u${index}`, hopToken: `t${index}`, provider: `u${index}`,
      secrets: { scrub: (text) => text, echoedIn: () => false },
      health: newHealth(),
      transport: {
        send() {
          calls[index]! += 1;
          if (result instanceof Error) return Promise.reject(result);
          return Promise.resolve({ body: Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result })) } as UpstreamResponse);
        },
        close: async () => {},
      } as Upstream['transport'],
    }),
  );
  return { list, calls };
}

function run(list: Upstream[], required: number, options: VerifyOptions = {}): Promise<{ err: unknown; ctx: RpcContext }> {
  const req = {} as IncomingMessage;
  const res = new EventEmitter() as unknown as ServerResponse;
  const ctx = initContext(req, 'r1', silentLogger);
  ctx.payload = { calls: [{ id: 1, method: 'eth_getBalance', params: [] }], batch: false, raw: Buffer.from('{}') };
  ctx.candidates = list;
  ctx.required = required;
  ctx.chain = { id: '1', upstreams: list, providerCount: list.length } as unknown as Chain;
  const pipeline = compose([fetchParallel({ upstreamTimeoutMs: 1000, requestTimeoutMs: 5000, maxResponseBytes: 1000 }), canonicalize(), verify(options)]);
  return new Promise((resolve) => pipeline(req, res, (err) => resolve({ err, ctx })));
}

test('composed by hand, the stages agree on the first N equal answers and record each vote', async (t) => {
  const { list, calls } = upstreams(['0x1', '0x2', '0x1']);
  const { err, ctx } = await run(list, 2);
  t.is(err, undefined);
  t.deepEqual(ctx.verdict?.members.map((m) => m.upstream.label), ['u0', 'u2']);
  t.deepEqual(calls, [1, 1, 1]);
  t.deepEqual(list.map((u) => u.health.recentLost), [0, 1, 0], 'the dissenting vote is recorded as lost');
});

test('composed by hand, a failure moves on and the upstreams\' failures reach the error', async (t) => {
  const { list } = upstreams([new Error('refused'), new Error('reset')]);
  const { err } = await run(list, 1);
  t.like(err, { rpcCode: -32011, data: { failures: [{ upstream: 'u0', reason: 'refused' }, { upstream: 'u1', reason: 'reset' }] } });
});

test('verify\'s policy option: an ineligible answer is not a vote, another upstream is asked, and the error lists it', async (t) => {
  const { list, calls } = upstreams(['0x0', '0x1', '0x1']);
  const eligible = (u: Upstream) => u.label !== 'u0';
  const { err, ctx } = await run(list, 1, { policy: () => ({ eligible }) });
  t.is(err, undefined);
  t.deepEqual(ctx.verdict?.members.map((m) => m.upstream.label), ['u1']);
  t.deepEqual(calls, [1, 1, 0]);
  const failed = await run(upstreams(['0x0', '0x1']).list, 2, { policy: () => ({ eligible }) });
  // u0's answer leaves too few upstreams to reach 2: u1's call is given up on at once.
  t.like(failed.err, { rpcCode: -32011, data: { ineligible: ['u0'], unanswered: ['u1'] } });
});
