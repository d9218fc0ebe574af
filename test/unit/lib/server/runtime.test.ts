/**
 * tuneRuntime: which V8 flags `omnigate serve` sets, and that a flag the process was started
 * with (either way, dashes or underscores) is left as the user chose.
 */
import test from 'ava';
import { runtimeFlags, tuneRuntime } from '../../../../lib/server/runtime.js';

test('should turn allocation-site pretenuring off and fix the heap growing factor when the process was started without the flags', (t) => {
  t.deepEqual(runtimeFlags, ['--no-allocation-site-pretenuring', '--heap-growing-percent=100']);
  t.deepEqual(tuneRuntime(['--enable-source-maps']), ['--no-allocation-site-pretenuring', '--heap-growing-percent=100']);
});

for (const given of ['--allocation-site-pretenuring', '--no-allocation-site-pretenuring', '--allocation_site_pretenuring', '--no-allocation_site_pretenuring']) {
  test(`should leave the flag alone when the process was started with ${given}`, (t) => {
    t.deepEqual(tuneRuntime(['--inspect', given]), ['--heap-growing-percent=100']);
  });
}

for (const given of ['--heap-growing-percent=50', '--heap_growing_percent=0', '--heap-growing-percent']) {
  test(`should leave the growing factor alone when the process was started with ${given}`, (t) => {
    t.deepEqual(tuneRuntime([given]), ['--no-allocation-site-pretenuring']);
  });
}

test('a flag whose name only begins like one of ours is not ours', (t) => {
  t.deepEqual(tuneRuntime(['--heap-growing-percent-of-something=1', '--allocation-site-pretenuring-x']), [...runtimeFlags]);
});
