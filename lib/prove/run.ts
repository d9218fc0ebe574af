/**
 * One request proven: its route (provers.ts), the agreed header of its pin (headers.ts), then the
 * ranked providers asked one at a time (hedged as a read: askInTurn) until one's material proves. A provider whose material
 * fails its proof is charged and the next is asked; when none proves, a -32021 says what failed
 * (each provider's ProofError reason and field), never the answer. When no provider gave any
 * material (errors only, or material of a type lib/proof cannot encode: `unsupported`, not a
 * lie), or the agreed block is under a quirk of the chain
 * (lib/proof/quirks.ts: before a cut-off), the request goes by agreement instead (`undefined`).
 */
import { ProofFailedError } from '../errors.js';
import { ProofError } from '../proof/failure.js';
import type { Upstream } from '../upstream/registry.js';
import { Cancellation } from '../upstream/transport/contract.js';
import { realTimers, type LoopState } from '../verify/question.js';
import { agreedHeader, chargeProof, creditProof, failedCall, type AgreedHeader } from './headers.js';
import type { ProofJob } from './job.js';
import { MaterialError, NotProvableHere, provesAt, type ProofRoute, type Proven } from './provers.js';

export interface ProvenAnswer extends Proven {
  readonly upstream: Upstream;
}

export async function runProof(job: ProofJob, route: ProofRoute): Promise<ProvenAnswer | undefined> {
  const agreed = route.pin === undefined ? undefined : await agreedHeader(job, route.pin);
  // N providers agree there is no such block: nothing to prove against (agreement answers it).
  if (route.pin !== undefined && agreed === undefined) return undefined;
  // The agreed block (or a range's lowest) is under a quirk of the chain: agreement answers it.
  if (agreed !== undefined && !provesAt(job.chain, route, agreed.header)) return undefined;
  const providers: Upstream[] = [];
  const seen = new Set<string>();
  for (const upstream of job.candidates) {
    if (seen.has(upstream.provider)) continue;
    seen.add(upstream.provider);
    providers.push(upstream);
  }
  return askInTurn(job, route, agreed, providers);
}

/**
 * The providers asked one at a time until one's material proves, hedged as the agreement loop
 * hedges a read (job.policy: `timeouts.hedgeMs` or the adaptive delay, the chain's hedging budget):
 * when the provider asked has not answered for the hedge delay, the next one is asked beside it,
 * and the first whose material proves is served; the others' calls are then cut short (abandoned,
 * as a hedged read's), their outcome neither charged nor credited. A provider that fails (a lie,
 * no material) has the next one asked in its place when no other is still being asked.
 */
function askInTurn(job: ProofJob, route: ProofRoute, agreed: AgreedHeader | undefined, providers: readonly Upstream[]): Promise<ProvenAnswer | undefined> {
  const failures: { upstream: string; reason: string; field?: string; message: string }[] = [];
  let lied = false;
  const hedging = job.policy?.({ chain: job.chain, payload: job.plan.payload, confirmable: true, required: 1 });
  const timers = hedging?.timers ?? realTimers;
  const startedAt = timers.now();
  const running = new Map<Upstream, Cancellation>();
  let next = 0;
  let hedged = 0;
  let hedgeTimer: unknown;
  let done = false;
  return new Promise((resolve, reject) => {
    const state = (): LoopState => ({ required: 1, votes: 0, missing: 1, inFlight: running.size, remaining: providers.length - next, called: next, hedged, elapsedMs: timers.now() - startedAt });
    const finish = (end: () => void) => {
      if (done) return;
      done = true;
      if (hedgeTimer !== undefined) timers.clearTimeout(hedgeTimer);
      job.signal.removeEventListener('abort', onAbort);
      // (the calls of the providers still asked are cut short: a hedged read's abandoned calls)
      for (const cancel of running.values()) cancel.abort(new Error('another provider proved the answer'));
      running.clear();
      end();
    };
    const onAbort = () => finish(() => reject(new Error('proof aborted')));
    job.signal.addEventListener('abort', onAbort);
    const armHedge = () => {
      if (hedgeTimer !== undefined) timers.clearTimeout(hedgeTimer);
      hedgeTimer = undefined;
      const delay = hedging?.hedgeDelayMs?.(state()) ?? 0;
      if (!(delay > 0) || next >= providers.length) return;
      hedgeTimer = timers.setTimeout(() => {
        hedgeTimer = undefined;
        if (done || running.size === 0 || next >= providers.length) return;
        // A hedge the budget refuses waits for another delay, as the agreement loop's.
        if (hedging?.mayHedge?.(state()) !== false) {
          hedged += 1;
          hedging?.onHedge?.(delay, 1);
          return start();
        }
        armHedge();
      }, delay);
    };
    const start = () => {
      const upstream = providers[next++]!;
      const cancel = new Cancellation();
      running.set(upstream, cancel);
      armHedge();
      route.prove(attemptOf(job, cancel), upstream, agreed).then(
        (proven) => {
          if (done) return;
          running.delete(upstream);
          creditProof(job, upstream);
          finish(() => resolve({ ...proven, upstream }));
        },
        (err: unknown) => {
          if (done) return;
          running.delete(upstream);
          if (err instanceof ProofError && err.reason === 'unsupported') {
            // A transaction or receipt type this library cannot encode (a chain's system transaction
            // of its own): not a lie, and no proof either; the next provider is asked, then agreement.
            failures.push({ upstream: upstream.label, reason: err.reason, field: err.field, message: upstream.secrets.scrub(err.message) });
          } else if (err instanceof ProofError) {
            lied = true;
            chargeProof(job, upstream, `${err.reason} at ${err.field}: ${err.message}`);
            failures.push({ upstream: upstream.label, reason: err.reason, field: err.field, message: upstream.secrets.scrub(err.message) });
          } else if (err instanceof NotProvableHere) {
            return finish(() => resolve(undefined));
          } else if (err instanceof MaterialError) {
            failedCall(upstream, err.message);
            failures.push({ upstream: upstream.label, reason: 'unanswered', message: err.message });
          } else return finish(() => reject(err));
          if (running.size > 0) return;
          if (next < providers.length) return start();
          finish(() => (lied ? reject(proofFailed(job, agreed, failures)) : resolve(undefined)));
        },
      );
    };
    if (job.signal.aborted) return onAbort();
    if (providers.length === 0) return finish(() => resolve(undefined));
    start();
  });
}

/** The job as one provider's attempt sees it: its own signal (cut when another provider proved), the bytes counted on the job. */
function attemptOf(job: ProofJob, cancel: Cancellation): ProofJob {
  if (job.signal.aborted) cancel.abort(job.signal.reason);
  return {
    ...job,
    signal: cancel,
    get bytes() {
      return job.bytes;
    },
    set bytes(n: number) {
      job.bytes = n;
    },
  };
}

function proofFailed(job: ProofJob, agreed: AgreedHeader | undefined, failures: readonly { upstream: string; reason: string; field?: string; message: string }[]): Error {
  return new ProofFailedError(`Proof failed: no provider's answer proved against the header ${job.required} provider${job.required === 1 ? '' : 's'} agreed on`, {
    data: { required: job.required, ...(agreed && { blockHash: agreed.header.hash, blockNumber: `0x${agreed.header.number.toString(16)}` }), failures },
  });
}
