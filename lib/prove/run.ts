/**
 * One request proven: its route (provers.ts), the agreed header of its pin (headers.ts), then the
 * ranked providers asked one at a time until one's material proves. A provider whose material
 * fails its proof is charged and the next is asked; when none proves, a -32021 says what failed
 * (each provider's ProofError reason and field), never the answer. When no provider gave any
 * material (errors only, or material of a type lib/proof cannot encode: `unsupported`, not a
 * lie), or the agreed block is under a quirk of the chain
 * (lib/proof/quirks.ts: before a cut-off), the request goes by agreement instead (`undefined`).
 */
import { ProofFailedError } from '../errors.js';
import { ProofError } from '../proof/failure.js';
import type { Upstream } from '../upstream/registry.js';
import { agreedHeader, chargeProof, creditProof, failedCall } from './headers.js';
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
  const failures: { upstream: string; reason: string; field?: string; message: string }[] = [];
  let lied = false;
  const seen = new Set<string>();
  for (const upstream of job.candidates) {
    if (seen.has(upstream.provider)) continue;
    seen.add(upstream.provider);
    if (job.signal.aborted) break;
    try {
      const proven = await route.prove(job, upstream, agreed);
      creditProof(job, upstream);
      return { ...proven, upstream };
    } catch (err) {
      if (err instanceof ProofError && err.reason === 'unsupported') {
        // A transaction or receipt type this library cannot encode (a chain's system transaction
        // of its own): not a lie, and no proof either; the next provider is asked, then agreement.
        failures.push({ upstream: upstream.label, reason: err.reason, field: err.field, message: upstream.secrets.scrub(err.message) });
      } else if (err instanceof ProofError) {
        lied = true;
        chargeProof(job, upstream, `${err.reason} at ${err.field}: ${err.message}`);
        failures.push({ upstream: upstream.label, reason: err.reason, field: err.field, message: upstream.secrets.scrub(err.message) });
      } else if (err instanceof NotProvableHere) {
        return undefined;
      } else if (err instanceof MaterialError) {
        failedCall(upstream, err.message);
        failures.push({ upstream: upstream.label, reason: 'unanswered', message: err.message });
      } else throw err;
    }
  }
  // The deadline passed (or the client left) while providers were asked: the caller says which.
  if (job.signal.aborted) throw new Error('proof aborted');
  if (!lied) return undefined;
  throw new ProofFailedError(`Proof failed: no provider's answer proved against the header ${job.required} provider${job.required === 1 ? '' : 's'} agreed on`, {
    data: { required: job.required, ...(agreed && { blockHash: agreed.header.hash, blockNumber: `0x${agreed.header.number.toString(16)}` }), failures },
  });
}
