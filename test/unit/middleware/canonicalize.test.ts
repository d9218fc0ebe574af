/**
 * Stage 5, canonicalize: what an answer will be judged by, written to the context (the payload,
 * the chain's ignored fields, whether the block is above every head).
 */
import test from 'ava';
import type { CallPlan } from '../../../lib/verify/calls.js';
import { canonicalize } from '../../../middleware/canonicalize.js';
import { runStage, single, stageRequest, testChain, testUpstream } from '../../support/stage.js';

const plan = {} as CallPlan;

test('should write the payload, the chain\'s ignored fields and beyondHeads to ctx.judging', async (t) => {
  const ignoredFields = { eth_getBlockByNumber: ['result.size'] } as unknown as ReturnType<typeof testChain>['ignoredFields'];
  const chain = testChain([testUpstream(0)], { ignoredFields });
  const payload = single('eth_getBlockByNumber', ['0x1', false]);
  const { req, res, ctx } = stageRequest({ chain, payload, fetch: plan, beyondHeads: true });
  const { err } = await runStage(canonicalize(), req, res);
  t.is(err, undefined);
  t.is(ctx.judging!.payload, payload);
  t.is(ctx.judging!.ignored, ignoredFields);
  t.true(ctx.judging!.beyondHeads);
});

test('should judge an unknown-block error as trouble unless the block is above every head', async (t) => {
  const { req, res, ctx } = stageRequest({ chain: testChain([testUpstream(0)]), payload: single('eth_blockNumber'), fetch: plan });
  await runStage(canonicalize(), req, res);
  t.false(ctx.judging!.beyondHeads);
});

test('should throw an InternalError when run before the fetch stage', (t) => {
  const { req, res } = stageRequest({ payload: single('eth_blockNumber') });
  t.throws(() => canonicalize()(req, res, () => {}), { message: /canonicalize needs ctx\.fetch/ });
});
