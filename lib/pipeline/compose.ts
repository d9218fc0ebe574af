/**
 * Composes connect-style stages into one `(req, res, next)` handler. Checked when composed,
 * not per request: every stage must be a function. A stage's `next(err)` stops the chain and
 * hands the error to the caller's `next`. A stage that calls its `next` a second time is a bug:
 * that call throws an InternalError at the stage (the chain does not run on a second time, so a
 * response is never written twice), and the throw is not swallowed as the stage's error. A
 * stage's `next` called after the chain already ended (an earlier throw) is ignored.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { InternalError } from '../errors.js';

export type Next = (err?: unknown) => void;
export type Middleware = (req: IncomingMessage, res: ServerResponse, next: Next) => void;

export function compose(stages: readonly Middleware[]): Middleware {
  stages.forEach((stage, i) => {
    if (typeof stage !== 'function') throw new TypeError(`stage ${i} is not a middleware function`);
  });
  return function pipeline(req, res, done) {
    let index = -1;
    const dispatch = (i: number, err?: unknown): void => {
      if (i <= index) return;
      index = i;
      // Like connect: only a truthy value is an error (next(null) moves on).
      if (err || i === stages.length) return done(err || undefined);
      let called = false;
      try {
        stages[i]!(req, res, (e?: unknown) => {
          if (called) throw secondNext(stages[i]!, i);
          called = true;
          dispatch(i + 1, e);
        });
      } catch (e) {
        if (misuses.has(e as object)) throw e;
        dispatch(stages.length, e);
      }
    };
    dispatch(0);
  };
}

/** Errors thrown for a second next(): rethrown through the stages' catch, never taken as a stage's error. */
const misuses = new WeakSet<object>();

function secondNext(stage: Middleware, i: number): Error {
  const err = new InternalError(`pipeline stage ${i}${stage.name ? ` (${stage.name})` : ''} called next() twice: a bug in that stage`);
  misuses.add(err);
  return err;
}
