/**
 * Composes connect-style stages into one `(req, res, next)` handler. Checked when composed,
 * not per request: every stage must be a function. A stage's `next(err)` stops the chain and
 * hands the error to the caller's `next`; a stage that calls next twice is a bug and is ignored
 * (koa-compose's guard), so a response is never written twice.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

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
      try {
        stages[i]!(req, res, (e?: unknown) => dispatch(i + 1, e));
      } catch (e) {
        dispatch(stages.length, e);
      }
    };
    dispatch(0);
  };
}
