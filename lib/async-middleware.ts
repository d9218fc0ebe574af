/**
 * Makes an async stage safe in connect, which ignores returned promises: a rejection becomes
 * next(err), and next is called at most once. The wrapper keeps the stage's name for traces.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Middleware, Next } from './compose.js';

export type AsyncStage = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

/** Wraps a stage that either throws (→ next(err)) or resolves (→ next()). */
export function asyncStage(fn: AsyncStage): Middleware {
  const mw: Middleware = (req, res, next: Next) => {
    let done = false;
    const once = (err?: unknown) => {
      if (done) return;
      done = true;
      next(err);
    };
    fn(req, res).then(() => once(), once);
  };
  return Object.defineProperty(mw, 'name', { value: fn.name });
}
