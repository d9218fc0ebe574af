/**
 * Merged requests: identical confirmable questions in flight share one agreement. The first
 * starts the run; a request asking the same question while it runs joins it instead of asking
 * the upstreams again, and gets the same end: the agreed answer under its own id (the answer's
 * other bytes and the quorum are the same), or the same error. The run is given up (its calls
 * aborted) only when every request that joined it is gone.
 *
 * The question is the chain, N, the method and the parameters (lib/jsonrpc/question-key.ts: only
 * single calls, and only when the key can promise that they are the same question for every node).
 */
import type { Chain } from '../upstream/registry.js';
import { questionKey } from '../jsonrpc/question-key.js';
import { UpstreamBudgetError } from '../errors.js';
import { replySliceBytes, withReplyIdSliced } from '../jsonrpc/reply.js';
import type { BudgetAccount } from '../upstream/budget.js';
import type { RpcId, RpcPayload } from '../jsonrpc/types.js';
import type { AgreementEnd, AgreementRun } from './question.js';

type Listener = (end: AgreementEnd) => void;

/**
 * The key of a request's question and N, or undefined when it must run alone
 * (lib/jsonrpc/question-key.ts). A run that counts a cached entry's votes (`topUp`: a question's
 * `prior`) is joined only by requests that would count them too: a request that bypassed the
 * cache must get answers asked now.
 */
export function mergeKey(chain: Chain, required: number, payload: RpcPayload, topUp = false): string | undefined {
  const question = questionKey(payload);
  return question === undefined ? undefined : `${chain.id}\n${required}${topUp ? '+' : ''}\n${question}`;
}

/** One run and the requests waiting for its end. */
class SharedRun {
  readonly listeners = new Set<Listener>();
  run: AgreementRun | undefined = undefined;
  ended = false;
}

/** The runs in flight of one pipeline, by question. */
export class InFlight {
  private readonly runs = new Map<string, SharedRun>();
  /** Requests that joined a run another request started, by chain id (a plain tally for /metrics). */
  readonly merged = new Map<string, number>();

  /**
   * The run of `key`'s question: joined when one is in flight, else started with `start` (which
   * gets the function that ends it). `done` hears the end once; the returned run's abort() is
   * this request leaving: the calls stop when the last one leaves. `joined` tells which it was.
   */
  join(key: string, start: (end: Listener) => AgreementRun, done: Listener): { run: AgreementRun; joined: boolean } {
    let shared = this.runs.get(key);
    const joined = shared !== undefined;
    if (shared === undefined) {
      const fresh = (shared = new SharedRun());
      this.runs.set(key, fresh);
      fresh.listeners.add(done);
      try {
        fresh.run = start((end) => this.end(key, fresh, end));
      } catch (error) {
        this.end(key, fresh, { kind: 'error', error });
      }
    } else {
      const chain = key.slice(0, key.indexOf('\n'));
      this.merged.set(chain, (this.merged.get(chain) ?? 0) + 1);
      shared.listeners.add(done);
    }
    const current = shared;
    return {
      joined,
      run: {
        called: current.run?.called ?? [],
        abort: () => this.leave(current, done),
      },
    };
  }

  /** How many runs are in flight (tests, metrics). */
  get size(): number {
    return this.runs.size;
  }

  private end(key: string, shared: SharedRun, end: AgreementEnd): void {
    if (shared.ended) return;
    shared.ended = true;
    if (this.runs.get(key) === shared) this.runs.delete(key);
    const listeners = [...shared.listeners];
    shared.listeners.clear();
    for (const listener of listeners) listener(end);
  }

  private leave(shared: SharedRun, done: Listener): void {
    if (!shared.listeners.delete(done) || shared.listeners.size > 0) return;
    // The last request waiting is gone: nobody reads the answer; the run stops (its end reaches no one).
    shared.run?.abort();
  }
}

/**
 * A run's end as a request that joined it gets it, given to `done`: the agreed (or relayed)
 * answer under its own id. An answer that cannot take it (none that voted) ends the request in an
 * error, never in another request's id. Only the first member's bytes are sent (confirmedBody),
 * so only they are rewritten; every member then carries that one body (as a cached answer's
 * members do), each its own upstream, hash and ignored fields: no member is left under another
 * request's id, and a long answer is copied once per request, not once per vote. A long answer
 * is rewritten a slice at a time (reply.ts withReplyIdSliced) so that the event loop serves
 * others meanwhile; a short one (and an end that is no answer) at once, before this returns.
 * Nothing is given when `owner.gone` turns true first (its client left).
 */
export function answerForSliced(end: AgreementEnd, id: RpcId, owner: { readonly gone: boolean }, done: (end: AgreementEnd) => void, account?: BudgetAccount): void {
  if (end.kind !== 'agreed' && end.kind !== 'refused') return done(end);
  const body = end.verdict.members[0]!.body;
  // The copy under this request's id is held until its answer is written: a long one is charged
  // to the request's own account of limits.bufferedBytes, as the upstream answers it would have
  // read alone; refused (-32013, 503) when the budget has no room, like those answers.
  if (account !== undefined && body.length > replySliceBytes && !account.take(body.length)) {
    if (owner.gone) return; // (its client left: nothing to answer)
    return done({
      kind: 'error',
      error: new UpstreamBudgetError('Upstream byte budget exhausted: no room for this request\'s copy of the shared answer within limits.bufferedBytes; try again shortly', {
        data: { bufferedBytes: account.limit, bytes: body.length },
        headers: { 'Retry-After': '1' },
      }),
    });
  }
  withReplyIdSliced(body, id, (b) => done(underId(end, b)), owner);
}

function underId(end: Extract<AgreementEnd, { kind: 'agreed' | 'refused' }>, body: Buffer | undefined): AgreementEnd {
  if (body === undefined) return { kind: 'error', error: new Error('merged request: the agreed answer has no single id to replace') };
  const members = end.verdict.members.map((m) => ({ ...m, body }));
  return { ...end, verdict: { ...end.verdict, members } };
}
