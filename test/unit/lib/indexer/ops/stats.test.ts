/**
 * The parts of the stats and status snapshots that need no database: Ponder's checkpoint read,
 * the snapshot cache (at most one computation at a time, recomputed once stale), the stages and
 * bookkeeping names.
 */
import test from 'ava';
import { cached, CHAIN_BLOCK_INDEXES, parseCheckpoint, STAGES } from '../../../../../lib/indexer/ops/stats.js';

test('parseCheckpoint should read the timestamp, chain id and block number of a Ponder checkpoint', (t) => {
  const checkpoint = `${'1722729600'}${'42161'.padStart(16, '0')}${'237979967'.padStart(16, '0')}${'0'.repeat(33)}`;
  t.deepEqual(parseCheckpoint(checkpoint), { timestamp: 1722729600, chainId: 42161, blockNumber: '237979967' });
  const huge = `${'1722729600'}${'1'.padStart(16, '0')}${'9'.repeat(16)}`;
  t.is(parseCheckpoint(huge)!.blockNumber, '9999999999999999', 'block numbers exact past 2^53');
});

test('parseCheckpoint should give null for the zero checkpoint and anything that is not one', (t) => {
  for (const value of ['0'.repeat(75), '123', `x${'1'.repeat(41)}`, 42, null, undefined, {}]) t.is(parseCheckpoint(value), null, JSON.stringify(value));
});

test('cached should compute once while fresh, again once stale, and share a computation under way', async (t) => {
  let now = 100;
  let computed = 0;
  let release: (() => void) | undefined;
  const value = cached(() => new Promise<number>((resolve) => {
    computed += 1;
    release = () => resolve(computed);
  }), 10, () => now);
  const [a, b] = [value.get(), value.get()];
  release!();
  t.deepEqual(await Promise.all([a, b]), [1, 1]);
  t.is(computed, 1, 'one computation for both');
  now = 109;
  t.is(await value.get(), 1, 'fresh for 10 s');
  t.is(computed, 1);
  now = 110;
  const stale = value.get();
  release!();
  t.is(await stale, 2);
  const forced = value.refresh();
  release!();
  t.is(await forced, 3);
});

test('cached should not keep a failed computation', async (t) => {
  let fail = true;
  const value = cached(async () => {
    if (fail) throw new Error('db down');
    return 'ok';
  }, 60, () => 0);
  await t.throwsAsync(value.get(), { message: 'db down' });
  fail = false;
  t.is(await value.get(), 'ok');
});

test('should name the five stages and one chain-block index per table', (t) => {
  t.deepEqual([...STAGES], ['missingRelay', 'exceedDeadline', 'missingProof', 'missingClaim', 'disputed']);
  t.deepEqual(CHAIN_BLOCK_INDEXES, ['omnigate_request_chain_block', 'omnigate_relay_chain_block', 'omnigate_proof_chain_block', 'omnigate_dispute_chain_block', 'omnigate_claim_chain_block', 'omnigate_refund_chain_block']);
});
