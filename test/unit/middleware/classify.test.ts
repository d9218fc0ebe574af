/**
 * Stage 2, classify: confirmable or not and N, written to the context; `safe`/`finalized`
 * resolved to the chain's tracked head; a chain constant in a batch with confirmable calls; a
 * block above every upstream's head relayed unconfirmed after the heads are asked again.
 */
import test from 'ava';
import { headSettings, recordHead, refreshChain, setChainHeadSettings } from '../../../lib/health/heads.js';
import type { RpcCall } from '../../../lib/jsonrpc/types.js';
import type { Chain } from '../../../lib/upstream/registry.js';
import { classify } from '../../../middleware/classify.js';
import { runStage, single, stageRequest, testChain, testUpstream } from '../../support/stage.js';

const address = `0x${'11'.repeat(20)}`;

async function classified(chain: Chain, fields: Parameters<typeof stageRequest>[0]) {
  const { req, res, ctx } = stageRequest({ chain, ...fields });
  const { err } = await runStage(classify(), req, res);
  return { err, ctx };
}

test('should make a read pinned to a block number confirmable at the chain\'s N', async (t) => {
  const chain = testChain([testUpstream(0), testUpstream(1), testUpstream(2)], { confirmations: 2 });
  const { err, ctx } = await classified(chain, { payload: single('eth_getBalance', [address, '0x10']) });
  t.is(err, undefined);
  t.true(ctx.confirmable);
  t.is(ctx.required, 2);
  t.is(ctx.beyondHeads, undefined);
});

test('should take the path\'s <n> over the chain\'s confirmations', async (t) => {
  const chain = testChain([testUpstream(0), testUpstream(1), testUpstream(2)], { confirmations: 2 });
  const { ctx } = await classified(chain, { payload: single('eth_getBalance', [address, '0x10']), confirmationsOverride: 3 });
  t.true(ctx.confirmable);
  t.is(ctx.required, 3);
});

test('should make a read of the moving head unconfirmable, with N=1 whatever the path says', async (t) => {
  const chain = testChain([testUpstream(0), testUpstream(1)], { confirmations: 2 });
  for (const payload of [single('eth_blockNumber'), single('eth_getBalance', [address, 'latest'])]) {
    const { ctx } = await classified(chain, { payload, confirmationsOverride: 2 });
    t.false(ctx.confirmable, payload.calls[0]!.method);
    t.is(ctx.required, 1);
  }
});

test('should leave safe/finalized unconfirmable while the chain\'s heads are not tracked', async (t) => {
  const chain = testChain([testUpstream(0), testUpstream(1)]);
  const payload = single('eth_getBalance', [address, 'finalized']);
  const { ctx } = await classified(chain, { payload });
  t.false(ctx.confirmable);
  t.is(ctx.payload, payload, 'the payload is not rewritten');
});

function trackedChain(heads: { latest: bigint; finalized?: bigint }[], answer?: (call: RpcCall) => unknown): Chain {
  const upstreams = heads.map((_, i) => testUpstream(i, { answer }));
  const chain = testChain(upstreams, { confirmations: 2 });
  setChainHeadSettings(chain, headSettings('1'));
  heads.forEach((h, i) => {
    recordHead(upstreams[i]!, 'latest', h.latest, 'poll');
    if (h.finalized !== undefined) recordHead(upstreams[i]!, 'finalized', h.finalized, 'poll');
  });
  refreshChain(chain);
  return chain;
}

test('should resolve finalized to the chain\'s finalized head and pin the request to it', async (t) => {
  const chain = trackedChain([{ latest: 0x100n, finalized: 0xf0n }, { latest: 0x100n, finalized: 0xf0n }]);
  const { ctx } = await classified(chain, { payload: single('eth_getBalance', [address, 'finalized'], 7) });
  t.true(ctx.confirmable);
  t.is(ctx.required, 2);
  t.deepEqual(ctx.payload!.calls, [{ id: 7, method: 'eth_getBalance', params: [address, '0xf0'] }]);
  t.deepEqual(JSON.parse(ctx.payload!.raw.toString()), { jsonrpc: '2.0', id: 7, method: 'eth_getBalance', params: [address, '0xf0'] }, 'the bytes sent upstream are rewritten too');
});

test('should make a chain constant confirmable in a batch that holds a confirmable call, and only then', async (t) => {
  const chain = testChain([testUpstream(0), testUpstream(1)], { confirmations: 2 });
  const inBatch = await classified(chain, { payload: single('eth_chainId'), batchConfirmable: true });
  t.true(inBatch.ctx.confirmable);
  t.is(inBatch.ctx.required, 2);
  const alone = await classified(chain, { payload: single('eth_chainId') });
  t.false(alone.ctx.confirmable);
  t.is(alone.ctx.required, 1);
  const other = await classified(chain, { payload: single('eth_blockNumber'), batchConfirmable: true });
  t.false(other.ctx.confirmable, 'only a chain constant follows its batch');
});

test('should relay a block above every upstream\'s head unconfirmed, after asking the heads again', async (t) => {
  const asked: string[] = [];
  const chain = trackedChain([{ latest: 0x100n }, { latest: 0x100n }], (call) => {
    asked.push(call.method);
    return call.method === 'eth_blockNumber' ? '0x100' : { number: '0xf0' };
  });
  const { err, ctx } = await classified(chain, { payload: single('eth_getBalance', [address, '0x1000']) });
  t.is(err, undefined);
  t.true(ctx.beyondHeads);
  t.false(ctx.confirmable);
  t.is(ctx.required, 1);
  t.is(asked.filter((m) => m === 'eth_blockNumber').length, 2, 'each upstream was asked for its head now');
});

test('should keep the read confirmable when asking the heads again shows the block exists', async (t) => {
  const chain = trackedChain([{ latest: 0x100n }, { latest: 0x100n }], (call) => (call.method === 'eth_blockNumber' ? '0x2000' : { number: '0xf0' }));
  const { ctx } = await classified(chain, { payload: single('eth_getBalance', [address, '0x1000']) });
  t.falsy(ctx.beyondHeads);
  t.true(ctx.confirmable);
  t.is(ctx.required, 2);
});

test('should throw an InternalError when run before parse wrote the payload', (t) => {
  const chain = testChain([testUpstream(0)]);
  const { req, res } = stageRequest({ chain });
  t.throws(() => classify()(req, res, () => {}), { message: /classify needs ctx\.payload/ });
});
