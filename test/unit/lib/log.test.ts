/** The default logger drops everything and never asks for a line to be built; a request's logger is made when it first writes. */
import test from 'ava';
import { lazyChild, silentLogger, type Logger } from '../../../lib/log.js';

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

test('lazyChild should make the child only at the first line of an enabled level, and write through it', (t) => {
  const children: Record<string, unknown>[] = [];
  const lines: unknown[][] = [];
  const recorder = (bindings: Record<string, unknown>): Logger => {
    const write = (level: string) =>
      function (this: Logger, ...args: unknown[]) {
        t.is(this, child, 'called as a method of the child (pino reads `this`)');
        lines.push([level, bindings, ...args]);
      } as Logger['info'];
    const child: Logger = { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error'), child: (b) => recorder({ ...bindings, ...b }) };
    return child;
  };
  const parent: Logger = {
    ...recorder({}),
    child: (b) => {
      children.push(b);
      return recorder(b);
    },
    isLevelEnabled: (level) => level === 'warn' || level === 'error',
  };
  const log = lazyChild(parent, { reqId: 'r1' });
  log.debug({ a: 1 }, 'not enabled');
  log.info('not enabled either');
  t.deepEqual(children, [], 'no child for lines below the level');
  t.false(log.isLevelEnabled!('info'));
  t.true(log.isLevelEnabled!('warn'));
  log.warn({ upstream: 'u' }, 'upstream call failed');
  log.error('broken');
  t.deepEqual(children, [{ reqId: 'r1' }], 'one child, made once');
  t.deepEqual(lines, [
    ['warn', { reqId: 'r1' }, { upstream: 'u' }, 'upstream call failed'],
    ['error', { reqId: 'r1' }, 'broken'],
  ]);
  log.child({ member: 2 }).warn('member');
  t.deepEqual(lines.at(-1), ['warn', { reqId: 'r1', member: 2 }, 'member']);
  t.is(lazyChild(silentLogger, { reqId: 'r2' }), silentLogger, 'the silent logger is its own child');
});

test('lazyChild should take every level as enabled when the parent cannot say', (t) => {
  let made = 0;
  const sink: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {}, child: () => (made++, sink) };
  const log = lazyChild(sink, { reqId: 'r' });
  t.true(log.isLevelEnabled!('debug'));
  log.debug('x');
  log.info('y');
  t.is(made, 1);
});
