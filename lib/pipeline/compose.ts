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
    new Run(stages, req, res, done).dispatch(0, undefined);
  };
}

/**
 * One request's way through the stages: an object of one shape, its steps shared methods; per
 * stage only the `next` it is handed. The stages run in order, each once the one before called
 * its next, so the stages whose next was called are exactly the first `reached`: a second call
 * is one from a stage below that mark.
 */
class Run {
  private index = -1;
  private reached = 0;

  constructor(
    private readonly stages: readonly Middleware[],
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly done: Next,
  ) {}

  dispatch(i: number, err: unknown): void {
    if (i <= this.index) return;
    this.index = i;
    const stages = this.stages;
    // Like connect: only a truthy value is an error (next(null) moves on).
    if (err || i === stages.length) return this.done(err || undefined);
    try {
      stages[i]!(this.req, this.res, this.nextOf(i));
    } catch (e) {
      if (misuses.has(e as object)) throw e;
      this.dispatch(stages.length, e);
    }
  }

  private nextOf(i: number): Next {
    return (e?: unknown) => {
      if (i < this.reached) throw secondNext(this.stages[i]!, i);
      this.reached = i + 1;
      this.dispatch(i + 1, e);
    };
  }
}

/** Errors thrown for a second next(): rethrown through the stages' catch, never taken as a stage's error. */
const misuses = new WeakSet<object>();

function secondNext(stage: Middleware, i: number): Error {
  const err = new InternalError(`pipeline stage ${i}${stage.name ? ` (${stage.name})` : ''} called next() twice: a bug in that stage`);
  misuses.add(err);
  return err;
}
