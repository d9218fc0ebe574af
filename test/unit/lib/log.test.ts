/** The default logger drops everything and never asks for a line to be built. */
import test from 'ava';
import { silentLogger } from '../../../lib/log.js';

test('silentLogger should accept every call, be its own child, and say no level is enabled', (t) => {
  t.notThrows(() => {
    silentLogger.debug('x');
    silentLogger.info({ a: 1 }, 'y');
    silentLogger.warn({ a: 1 });
    silentLogger.error('z');
  });
  t.is(silentLogger.child({ reqId: 'r' }), silentLogger);
  for (const level of ['debug', 'info', 'warn', 'error'] as const) t.false(silentLogger.isLevelEnabled!(level));
});
