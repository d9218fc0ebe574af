/**
 * `omnigate serve --workers N`'s pure parts: the `--workers` value, when a crashed worker is
 * replaced (at once after one that lived, with a doubling delay after crashes at start, and a
 * give-up after several in a row), and the head polls a starting worker receives (each upstream's
 * last known heads and tags, merged over rounds that asked for the latest head only).
 */
import test from 'ava';
import { fastCrashMs, maxFastCrashes, mergePolls, restartAfter, workersArg } from '../../../../lib/server/cluster.js';

test('--workers takes a count from 1, or auto for the cores', (t) => {
  t.is(workersArg('2'), 2);
  t.is(workersArg('auto', 8), 8);
  for (const bad of ['0', '-1', '1.5', 'two', '', '5000']) t.throws(() => workersArg(bad), { message: /integer from 1/ });
});

test('a worker that lived is replaced at once, and clears the crash count', (t) => {
  t.deepEqual(restartAfter(3, fastCrashMs), { delayMs: 0, fastCrashes: 0 });
});

test('crashes at start are replaced after a doubling delay, then the primary gives up', (t) => {
  let crashes = 0;
  const delays: number[] = [];
  for (;;) {
    const next = restartAfter(crashes, 100);
    if (next === 'give up') break;
    delays.push(next.delayMs);
    crashes = next.fastCrashes;
  }
  t.deepEqual(delays, [250, 500, 1000, 2000]);
  t.is(delays.length, maxFastCrashes - 1);
});

test('a starting worker gets each upstream\'s last heads, the tags of an earlier round kept', (t) => {
  const tagged = [{ latest: 100n, safe: 90n, finalized: 80n, tags: 'native' as const }, undefined];
  const latestOnly = [{ latest: 104n, safe: undefined, finalized: undefined, tags: undefined }, { latest: 7n, safe: undefined, finalized: undefined, tags: undefined }];
  t.deepEqual(mergePolls(mergePolls(undefined, tagged), latestOnly), [
    { latest: 104n, safe: 90n, finalized: 80n, tags: 'native' },
    { latest: 7n, safe: undefined, finalized: undefined, tags: undefined },
  ]);
  t.deepEqual(mergePolls(tagged, [undefined, undefined]), tagged);
});
