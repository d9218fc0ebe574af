/**
 * tuneRuntime: which V8 flags `omnigate serve` sets, and that a flag the process was started
 * with (either way, dashes or underscores) is left as the user chose.
 */
import test from 'ava';
import { runtimeFlags, tuneRuntime, workerExecArgv, youngGenerationFlag } from '../../../../lib/server/runtime.js';

test('should turn allocation-site pretenuring off when the process was started without the flag', (t) => {
  t.deepEqual(runtimeFlags, ['--no-allocation-site-pretenuring']);
  t.deepEqual(tuneRuntime(['--enable-source-maps']), ['--no-allocation-site-pretenuring']);
});

for (const given of ['--allocation-site-pretenuring', '--no-allocation-site-pretenuring', '--allocation_site_pretenuring', '--no-allocation_site_pretenuring']) {
  test(`should leave the flag alone when the process was started with ${given}`, (t) => {
    t.deepEqual(tuneRuntime(['--inspect', given]), []);
  });
}

test('a cluster worker starts with the primary\'s flags and a 32 MB semi-space, unless the flags or NODE_OPTIONS size it already', (t) => {
  t.is(youngGenerationFlag, '--max-semi-space-size=32');
  t.deepEqual(workerExecArgv([], ''), ['--max-semi-space-size=32']);
  t.deepEqual(workerExecArgv(['--enable-source-maps'], '--max-old-space-size=512'), ['--enable-source-maps', '--max-semi-space-size=32']);
  t.deepEqual(workerExecArgv(['--max-semi-space-size=8'], ''), ['--max-semi-space-size=8']);
  t.deepEqual(workerExecArgv(['--max_semi_space_size', '64'], ''), ['--max_semi_space_size', '64']);
  t.deepEqual(workerExecArgv(['--inspect'], '--max-semi-space-size=4 --trace-gc'), ['--inspect']);
});
