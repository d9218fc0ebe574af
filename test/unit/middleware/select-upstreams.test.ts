/**
 * Stage 3, select upstreams: the ranked candidates written to the context (one upstream of each
 * provider first, a cooling-down or distrusted upstream last), the -32003 of an N above the
 * usable providers, and a distrusted upstream sampled as a voter once in `sampleEvery` requests.
 */
import test from 'ava';
import type { Chain } from '../../../lib/upstream/registry.js';
import { selectUpstreams, type SelectUpstreamsOptions } from '../../../middleware/select-upstreams.js';
import { runStage, single, stageRequest, testChain, testUpstream } from '../../support/stage.js';

const address = `0x${'11'.repeat(20)}`;

async function select(chain: Chain, required: number, stage = selectUpstreams()) {
  const { req, res, ctx } = stageRequest({ chain, required, payload: single('eth_getBalance', [address, '0x10']) });
  const { err } = await runStage(stage, req, res);
  return { err, labels: ctx.candidates?.map((u) => u.label.slice(7, 9)) };
}

test('should list every upstream, in configured order when all are healthy', async (t) => {
  const chain = testChain([testUpstream(0), testUpstream(1), testUpstream(2)], { strategy: 'priority' });
  t.deepEqual(await select(chain, 2), { err: undefined, labels: ['u0', 'u1', 'u2'] });
});

test('should put one upstream of each provider first', async (t) => {
  const chain = testChain([testUpstream(0, { provider: 'a' }), testUpstream(1, { provider: 'a' }), testUpstream(2, { provider: 'b' })], { strategy: 'priority' });
  t.is(chain.providerCount, 2);
  t.deepEqual((await select(chain, 2)).labels, ['u0', 'u2', 'u1']);
});

test('should rank a cooling-down upstream after the healthy ones', async (t) => {
  const cooling = testUpstream(0, { health: { coolingUntil: Date.now() + 60_000, consecutiveFailures: 3, successes: 1 } });
  const chain = testChain([cooling, testUpstream(1), testUpstream(2)], { strategy: 'priority' });
  t.deepEqual((await select(chain, 1)).labels, ['u1', 'u2', 'u0']);
});

test('should leave out an upstream on back-off after a rate limit while the others hold N providers; else keep it, last', async (t) => {
  const limited = () => testUpstream(0, { health: { rateLimitedUntil: Date.now() + 60_000, successes: 1 } });
  const chain = testChain([limited(), testUpstream(1), testUpstream(2)], { strategy: 'priority' });
  t.deepEqual((await select(chain, 1)).labels, ['u1', 'u2']);
  t.deepEqual((await select(chain, 2)).labels, ['u1', 'u2']);
  t.deepEqual((await select(chain, 3)).labels, ['u1', 'u2', 'u0'], 'three providers needed: asked last');
  const over = testChain([limited(), testUpstream(1, { health: { distrusted: true, successes: 1 } })], { strategy: 'priority' });
  t.deepEqual((await select(over, 1)).labels, ['u1'], 'left out even behind a distrusted one');
  const ended = testChain([testUpstream(0, { health: { rateLimitedUntil: Date.now() - 1, successes: 1 } }), testUpstream(1)], { strategy: 'priority' });
  t.deepEqual((await select(ended, 1)).labels, ['u0', 'u1'], 'its back-off over: back in its place');
});

test('should refuse an N above the chain\'s usable providers with -32003 and its data', async (t) => {
  const chain = testChain([testUpstream(0, { provider: 'a' }), testUpstream(1, { provider: 'a' }), testUpstream(2, { provider: 'b' })]);
  const { err, labels } = await select(chain, 3);
  t.like(err, { rpcCode: -32003, status: 400, data: { required: 3, usable: 2, usableUpstreams: 3 } });
  t.regex((err as Error).message, /chain 1 has 2 usable providers/);
  t.is(labels, undefined, 'no candidates are written');
});

test('should take a distrusted upstream as the last of N voters once in sampleEvery verified requests', async (t) => {
  const distrusted = testUpstream(0, { health: { distrusted: true, successes: 1 } });
  const chain = testChain([distrusted, testUpstream(1), testUpstream(2), testUpstream(3)], { strategy: 'priority' });
  const options: SelectUpstreamsOptions = { sampleEvery: 3 };
  const stage = selectUpstreams(options);
  const seen: (string[] | undefined)[] = [];
  for (let i = 0; i < 6; i++) seen.push((await select(chain, 2, stage)).labels);
  const ranked = ['u1', 'u2', 'u3', 'u0'];
  const sampled = ['u1', 'u0', 'u2', 'u3'];
  t.deepEqual(seen, [ranked, ranked, sampled, ranked, ranked, sampled]);
  t.deepEqual((await select(chain, 1, selectUpstreams({ sampleEvery: 1 }))).labels, ranked, 'an unverified read never samples it');
});

test('should refuse a sampleEvery that is not a positive integer', (t) => {
  t.throws(() => selectUpstreams({ sampleEvery: 0 }), { instanceOf: TypeError });
  t.throws(() => selectUpstreams({ sampleEvery: 1.5 }), { instanceOf: TypeError });
});

test('should keep configured order for N=1 under the priority strategy, and exploring never reorders healthy peers', async (t) => {
  let now = 0;
  const stage = selectUpstreams({ exploreEveryMs: 10, clock: () => now });
  const chain = testChain([testUpstream(0), testUpstream(1)], { strategy: 'priority' });
  t.deepEqual((await select(chain, 1, stage)).labels, ['u0', 'u1']);
  now = 100;
  t.deepEqual((await select(chain, 1, stage)).labels, ['u0', 'u1']);
});

test('should throw an InternalError when run before classify wrote N', (t) => {
  const chain = testChain([testUpstream(0)]);
  const { req, res } = stageRequest({ chain });
  t.throws(() => selectUpstreams()(req, res, () => {}), { message: /selectUpstreams needs ctx\.required/ });
});

