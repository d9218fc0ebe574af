/**
 * Merged proof runs: identical confirmable requests in flight that go to proof mode share one
 * run (the header agreed once, one provider's material asked once), as lib/verify/merge.ts does
 * for agreements. The first starts the run; a request asking the same question (chain, N, method,
 * parameters: mergeKey) while it runs joins it and hears the same end: the proven value, which
 * each request writes under its own id, or "no material" (each then goes by agreement, where
 * verify's merge applies), or the same error. A request that leaves (its deadline, its client
 * gone) stops listening; the run's calls are aborted only when every request that joined it is
 * gone.
 */
import { Cancellation } from '../upstream/transport/contract.js';
import type { ProvenAnswer } from './run.js';

/** How a shared run ended: proven (or `proven` undefined: no material, agreement instead), or failed. */
export type ProofEnd = { ok: true; proven: ProvenAnswer | undefined; error: undefined } | { ok: false; proven: undefined; error: unknown };

type Listener = (end: ProofEnd) => void;

/** One proof run and the requests waiting for its end. */
class SharedProof {
  constructor(readonly key: string | undefined) {}
  readonly listeners = new Set<Listener>();
  /** The run's calls stop when it is aborted: the last request waiting is gone. */
  readonly signal = new Cancellation();
  ended = false;
}

/** A request's place in a run: whether it joined one in flight, and how it leaves. */
export interface ProofSeat {
  readonly joined: boolean;
  leave(): void;
}

/** The proof runs in flight of one pipeline, by question. */
export class ProofRuns {
  private readonly runs = new Map<string, SharedProof>();

  /** `merged`: the tally of requests that joined a run, by chain id (shared with the agreements' in /metrics). */
  constructor(readonly merged = new Map<string, number>()) {}

  /**
   * The run of `key`'s question: joined when one is in flight, else started with `start` (given
   * the run's signal). `key` undefined: a run of its own. `done` hears the end once, unless the
   * request left first.
   */
  join(key: string | undefined, chainId: string, start: (signal: Cancellation) => Promise<ProvenAnswer | undefined>, done: Listener): ProofSeat {
    let shared = key === undefined ? undefined : this.runs.get(key);
    const joined = shared !== undefined;
    if (shared === undefined) {
      const fresh = (shared = new SharedProof(key));
      if (key !== undefined) this.runs.set(key, fresh);
      fresh.listeners.add(done);
      let running: Promise<ProvenAnswer | undefined>;
      try {
        running = start(fresh.signal);
      } catch (error) {
        running = Promise.reject(error);
      }
      running.then(
        (proven) => this.end(key, fresh, { ok: true, proven, error: undefined }),
        (error: unknown) => this.end(key, fresh, { ok: false, proven: undefined, error }),
      );
    } else {
      this.merged.set(chainId, (this.merged.get(chainId) ?? 0) + 1);
      shared.listeners.add(done);
    }
    const current = shared;
    return { joined, leave: () => this.leave(current, done) };
  }

  /** How many shared runs are in flight (tests). */
  get size(): number {
    return this.runs.size;
  }

  private end(key: string | undefined, shared: SharedProof, end: ProofEnd): void {
    if (shared.ended) return;
    shared.ended = true;
    if (key !== undefined && this.runs.get(key) === shared) this.runs.delete(key);
    const listeners = [...shared.listeners];
    shared.listeners.clear();
    for (const listener of listeners) listener(end);
  }

  private leave(shared: SharedProof, done: Listener): void {
    if (!shared.listeners.delete(done) || shared.listeners.size > 0 || shared.ended) return;
    // The last request waiting is gone: nobody reads the answer; the run's calls stop, and a
    // request asking the same question from now on starts a run of its own.
    if (shared.key !== undefined && this.runs.get(shared.key) === shared) this.runs.delete(shared.key);
    shared.signal.abort('left');
  }
}
