import type { IncomingMessage } from 'node:http';
import test from 'ava';
import { InternalError } from '../../../../lib/errors.js';
import { silentLogger } from '../../../../lib/log.js';
import { findContext, getContext, initContext, need } from '../../../../lib/pipeline/context.js';

test('should keep one context per request, found again by getContext and findContext', (t) => {
  const a = {} as IncomingMessage;
  const b = {} as IncomingMessage;
  t.is(findContext(a), undefined);
  const ctx = initContext(a, 'id-a', silentLogger);
  t.is(ctx.requestId, 'id-a');
  t.is(ctx.log, silentLogger);
  t.deepEqual(Object.entries(ctx).filter(([, v]) => v !== undefined).map(([k]) => k), ['requestId', 'log'], 'no stage field written yet');
  t.deepEqual(Object.keys(initContext({} as IncomingMessage, 'id-b', silentLogger)), Object.keys(ctx), 'every request\'s context has the same fields, in the same order');
  t.is(getContext(a), ctx);
  t.is(findContext(a), ctx);
  t.is(findContext(b), undefined);
  t.deepEqual(Object.keys(a), [], 'no enumerable field is added to the host app\'s request');
});

test('should throw an InternalError when a stage runs before parse', (t) => {
  t.throws(() => getContext({} as IncomingMessage), { instanceOf: InternalError, message: /before parse/ });
});

test('need should return a field an earlier stage wrote and name the stage and field when it is missing', (t) => {
  const ctx = initContext({} as IncomingMessage, 'r', silentLogger);
  ctx.required = 0;
  t.is(need(ctx, 'required', 'select'), 0, 'a falsy value that is set counts');
  const err = t.throws(() => need(ctx, 'verdict', 'emitHeaders'), { instanceOf: InternalError });
  t.is(err?.message, 'emitHeaders needs ctx.verdict: stages are out of order');
});
