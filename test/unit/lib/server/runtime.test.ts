/**
 * tuneRuntime: which V8 flags `omnigate serve` sets, and that a flag the process was started
 * with (either way, dashes or underscores) is left as the user chose.
 */
import test from 'ava';
import { runtimeFlags, tuneRuntime } from '../../../../lib/server/runtime.js';

test('should turn allocation-site pretenuring off when the process was started without the flag', (t) => {
  t.deepEqual(runtimeFlags, ['--no-allocation-site-pretenuring']);
  t.deepEqual(tuneRuntime(['--enable-source-maps']), ['--no-allocation-site-pretenuring']);
});

for (const given of ['--allocation-site-pretenuring', '--no-allocation-site-pretenuring', '--allocation_site_pretenuring', '--no-allocation_site_pretenuring']) {
  test(`should leave the flag alone when the process was started with ${given}`, (t) => {
    t.deepEqual(tuneRuntime(['--inspect', given]), []);
  });
}
