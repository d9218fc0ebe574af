import type { IncomingMessage, ServerResponse } from 'node:http';
import test from 'ava';
import { compose, type Middleware, type Next } from '../../../../lib/pipeline/compose.js';
import { InternalError } from '../../../../lib/errors.js';

const req = {} as IncomingMessage;
const res = {} as ServerResponse;

/** Runs a pipeline and resolves with every call of the final `next`, once things settle. */
async function run(stages: Middleware[]): Promise<unknown[][]> {
  const calls: unknown[][] = [];
  compose(stages)(req, res, (...args: unknown[]) => calls.push(args));
  await new Promise((resolve) => setTimeout(resolve, 20));
  return calls;
}
const tick = () => new Promise((resolve) => setImmediate(resolve));

test('should run the stages in order, then call next without an error', async (t) => {
  const seen: string[] = [];
  const stage = (name: string): Middleware => (_req, _res, next) => {
    seen.push(name);
    next();
  };
  t.deepEqual(await run([stage('a'), stage('b'), stage('c')]), [[undefined]]);
  t.deepEqual(seen, ['a', 'b', 'c']);
});

test('should pass the same req and res to every stage', async (t) => {
  const pairs: [unknown, unknown][] = [];
  const stage: Middleware = (q, s, next) => {
    pairs.push([q, s]);
    next();
  };
  await run([stage, stage]);
  t.deepEqual(pairs, [[req, res], [req, res]]);
});

test('should call next at once for an empty pipeline', async (t) => {
  t.deepEqual(await run([]), [[undefined]]);
});

test('should wait for a stage that calls next later', async (t) => {
  const seen: string[] = [];
  const calls = await run([
    (_q, _s, next) => void setImmediate(() => { seen.push('a'); next(); }),
    (_q, _s, next) => { seen.push('b'); next(); },
  ]);
  t.deepEqual(seen, ['a', 'b']);
  t.deepEqual(calls, [[undefined]]);
});

test('should stop the chain at next(err) and hand the error on', async (t) => {
  const err = new Error('boom');
  const seen: string[] = [];
  const calls = await run([
    (_q, _s, next) => { seen.push('a'); next(err); },
    (_q, _s, next) => { seen.push('b'); next(); },
  ]);
  t.deepEqual(seen, ['a']);
  t.deepEqual(calls, [[err]]);
});

test('should turn a synchronous throw into next(err)', async (t) => {
  const err = new Error('sync');
  const seen: string[] = [];
  const calls = await run([
    () => { throw err; },
    (_q, _s, next) => { seen.push('b'); next(); },
  ]);
  t.deepEqual(seen, []);
  t.deepEqual(calls, [[err]]);
});

test('should turn a throw from a later stage into one next(err)', async (t) => {
  const err = new Error('late');
  const calls = await run([(_q, _s, next) => next(), (_q, _s, next) => next(), () => { throw err; }]);
  t.deepEqual(calls, [[err]]);
});

test('should throw an InternalError at a stage that calls next() twice, and run the rest once', (t) => {
  let b = 0;
  const calls: unknown[][] = [];
  const twice: Middleware = function twice(_q, _s, next) {
    next();
    next();
  };
  const error = t.throws(
    () => compose([twice, (_q, _s, next) => { b += 1; next(); }])(req, res, (...args: unknown[]) => calls.push(args)),
    { instanceOf: InternalError },
  );
  t.is(error?.message, 'pipeline stage 0 (twice) called next() twice: a bug in that stage');
  t.is(b, 1);
  t.deepEqual(calls, [[undefined]]);
});

test('should throw at a later next(err) after the stage already called next(), and not pass the error on', async (t) => {
  let late: Next = () => {};
  const calls = await run([
    (_q, _s, next) => { late = next; next(); },
    (_q, _s, next) => void setImmediate(() => next()),
  ]);
  t.throws(() => late(new Error('too late')), { instanceOf: InternalError, message: /stage 0 called next\(\) twice/ });
  await tick();
  t.deepEqual(calls, [[undefined]]);
});

test('should throw at a stage\'s next() after its own next(err) stopped the chain', async (t) => {
  const err = new Error('first');
  let b = 0;
  let second: unknown;
  const calls = await run([
    (_q, _s, next) => {
      setImmediate(() => {
        try {
          next();
        } catch (e) {
          second = e;
        }
      });
      next(err);
    },
    (_q, _s, next) => { b += 1; next(); },
  ]);
  t.is(b, 0);
  t.deepEqual(calls, [[err]]);
  t.true(second instanceof InternalError);
});

test('should ignore a stage\'s first next() after the chain ended on its throw', async (t) => {
  const err = new Error('thrown');
  let b = 0;
  const calls = await run([
    (_q, _s, next) => {
      setImmediate(() => next());
      throw err;
    },
    (_q, _s, next) => { b += 1; next(); },
  ]);
  t.is(b, 0);
  t.deepEqual(calls, [[err]]);
});

test('should stop at an async stage that calls next(err) later', async (t) => {
  const err = new Error('rejected');
  const seen: string[] = [];
  const calls = await run([
    (_q, _s, next) => void tick().then(() => next(err)),
    (_q, _s, next) => { seen.push('b'); next(); },
  ]);
  t.deepEqual(seen, []);
  t.deepEqual(calls, [[err]]);
});

test('should continue after an async stage calls next() later', async (t) => {
  const seen: string[] = [];
  const calls = await run([
    (_q, _s, next) => void tick().then(() => { seen.push('a'); next(); }),
    (_q, _s, next) => { seen.push('b'); next(); },
  ]);
  t.deepEqual(seen, ['a', 'b']);
  t.deepEqual(calls, [[undefined]]);
});

const notFunctions: [string, unknown][] = [
  ['undefined', undefined],
  ['null', null],
  ['a string', 'parseJsonRpc'],
  ['an object', { handle() {} }],
];
for (const [name, value] of notFunctions) {
  test(`should throw a TypeError at compose time for ${name} as a stage`, (t) => {
    const ok: Middleware = (_q, _s, next) => next();
    t.throws(() => compose([ok, value as Middleware]), { instanceOf: TypeError, message: 'stage 1 is not a middleware function' });
  });
}

test('should return a named 3-argument handler', (t) => {
  const pipeline = compose([]);
  t.is(pipeline.name, 'pipeline');
  t.is(pipeline.length, 3);
});

test('should leave the stages\' own names alone', (t) => {
  function parseJsonRpc(_q: IncomingMessage, _s: ServerResponse, next: Next) {
    next();
  }
  const classify: Middleware = (_q, _s, next) => next();
  const stages = [parseJsonRpc, classify];
  compose(stages);
  t.deepEqual(stages.map((s) => s.name), ['parseJsonRpc', 'classify']);
});

// connect and express both read next(null) as "no error" (connect: `Boolean(err)`; express:
// `if (layerError)`), and middleware written for them calls it. Here it skips the remaining stages.
test('should treat next(null) as success, as connect and express do', async (t) => {
  const seen: string[] = [];
  await run([
    (_q, _s, next) => next(null),
    (_q, _s, next) => { seen.push('b'); next(); },
  ]);
  t.deepEqual(seen, ['b'], 'the stage after next(null) did not run');
});
