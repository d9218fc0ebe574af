/**
 * runMembers: the member stages run on the request for a single call, once per call member of a
 * batch, each on a context of its own; refused members and notifications kept in their places;
 * a member's error is its result, not the batch's; the batch's answer done stops every member.
 */
import test from 'ava';
import { InvalidParamsError } from '../../../lib/errors.js';
import { parsePayload } from '../../../lib/jsonrpc/parse.js';
import type { Middleware } from '../../../lib/pipeline/compose.js';
import { getContext, type RpcContext } from '../../../lib/pipeline/context.js';
import type { Chain } from '../../../lib/upstream/registry.js';
import { runMembers } from '../../../middleware/run-members.js';
import { runStage, stageRequest, testChain, testUpstream } from '../../support/stage.js';

const call = (id: number | undefined, method: string, params: unknown[] = []) => ({ jsonrpc: '2.0', ...(id === undefined ? {} : { id }), method, params });
const payloadOf = (body: unknown) => parsePayload(Buffer.from(JSON.stringify(body)), { maxBatchSize: 10 });

/** A member stage that records each context it ran on, and refuses eth_call. */
function recorder() {
  const seen: RpcContext[] = [];
  const stage: Middleware = (req, _res, next) => {
    const ctx = getContext(req);
    seen.push(ctx);
    if (ctx.payload!.calls[0]!.method === 'eth_call') return next(new InvalidParamsError('no eth_call here'));
    ctx.required = 1;
    next();
  };
  return { seen, stage };
}

async function run(body: unknown, chain: Chain = testChain([testUpstream(0), testUpstream(1)])) {
  const { seen, stage } = recorder();
  const { req, res, ctx } = stageRequest({ chain, payload: payloadOf(body) });
  const { err } = await runStage(runMembers([stage]), req, res);
  return { err, ctx, seen, res };
}

test('should run the stages on the request itself for a single call', async (t) => {
  const { err, ctx, seen } = await run(call(1, 'eth_blockNumber'));
  t.is(err, undefined);
  t.deepEqual(seen, [ctx]);
  t.is(ctx.required, 1);
  t.is(ctx.members, undefined);
});

test('should pass a single call\'s error to next', async (t) => {
  const { err } = await run(call(1, 'eth_call'));
  t.like(err, { rpcCode: -32602 });
});

test('should run each call member as a single call on its own context, and keep every member in its place', async (t) => {
  const { err, ctx, seen } = await run([call(1, 'eth_blockNumber'), call(undefined, 'eth_chainId'), { jsonrpc: '2.0', id: 3 }, call(4, 'eth_call'), call(5, 'eth_gasPrice')]);
  t.is(err, undefined);
  t.is(seen.length, 3, 'notifications and refused members are not run');
  t.deepEqual(seen.map((c) => c.payload!.calls.map((x) => x.id)), [[1], [4], [5]]);
  t.true(seen.every((c) => c !== ctx && c.payload!.batch === false && c.chain === ctx.chain && c.requestId === ctx.requestId));
  t.deepEqual(JSON.parse(seen[2]!.payload!.raw.toString()), call(5, 'eth_gasPrice'), 'a member forwards its own bytes');
  const members = ctx.members!;
  t.deepEqual(members.map((m) => m.kind), ['answer', 'notification', 'error', 'error', 'answer']);
  t.like(members[2], { kind: 'error', error: { rpcCode: -32600 } });
  t.like(members[3], { kind: 'error', error: { rpcCode: -32602 } });
  t.is(members[4]!.kind === 'answer' && members[4]!.ctx.required, 1);
});

test('should share one coalescer among a batch\'s calls unless the chain says batchUpstream: false', async (t) => {
  const batch = [call(1, 'eth_blockNumber'), call(2, 'eth_gasPrice')];
  const { seen } = await run(batch);
  t.truthy(seen[0]!.coalescer);
  t.is(seen[0]!.coalescer, seen[1]!.coalescer);
  const alone = await run(batch, testChain([testUpstream(0)], { batchUpstream: false }));
  t.is(alone.seen[0]!.coalescer, undefined);
});

test('should mark members of a batch holding a confirmable call, so that its chain constants follow it', async (t) => {
  const { seen } = await run([call(1, 'eth_chainId'), call(2, 'eth_getBalance', ['0x1', '0x10'])]);
  t.true(seen[0]!.batchConfirmable);
  const none = await run([call(1, 'eth_chainId'), call(2, 'eth_blockNumber')]);
  t.is(none.seen[0]!.batchConfirmable, undefined);
});

test('should end at once for a batch of notifications only', async (t) => {
  const { err, ctx, seen } = await run([call(undefined, 'eth_chainId'), call(undefined, 'eth_blockNumber')]);
  t.is(err, undefined);
  t.is(seen.length, 0);
  t.deepEqual(ctx.members, [{ kind: 'notification' }, { kind: 'notification' }]);
});

test('should tell every member that the batch\'s answer is done when the response closes', async (t) => {
  let closed = 0;
  let finish: (() => void) | undefined;
  const waiting: Middleware = (_req, res, next) => {
    res.once('close', () => {
      closed += 1;
      next();
    });
  };
  const { req, res, ctx } = stageRequest({ chain: testChain([testUpstream(0)]), payload: payloadOf([call(1, 'eth_blockNumber'), call(2, 'eth_gasPrice')]) });
  const ended = new Promise<void>((resolve) => (finish = resolve));
  runMembers([waiting])(req, res, () => finish!());
  t.is(closed, 0);
  res.emit('close');
  await ended;
  t.is(closed, 2);
  t.is(ctx.members!.length, 2);
});
