/**
 * Agreed headers: the block header of a pinned block, agreed by N providers through the agreement
 * loop (lib/verify/agreement.ts) on `eth_getBlockByNumber(n, false)` or `eth_getBlockByHash(h,
 * false)`, each answer's hash recomputed from its fields (lib/proof/header.ts checkHeader) before
 * it may vote: a provider whose header does not hash to its `hash` fails its call (charged like
 * any failure, and as a lost vote). Final headers are kept in the book (book.ts), and through it in
 * the cache of confirmed answers when there is one (memory, Redis): a header found there is
 * rechecked before use, and one of a smaller N is topped up (its votes counted, only the missing
 * ones asked).
 */
import { checkHeader, type BlockJson } from '../proof/header.js';
import { ProofError } from '../proof/failure.js';
import { recordFailure, recordVote } from '../health/health.js';
import type { Outcome } from '../upstream/fanout.js';
import type { Upstream } from '../upstream/registry.js';
import type { UpstreamResponse } from '../upstream/transport/contract.js';
import { runAgreement } from '../verify/agreement.js';
import { judgeOf } from '../verify/assess.js';
import { callOf, expectedLatency } from '../verify/calls.js';
import { mergeLoopPolicy } from '../verify/loop-policy.js';
import { failureError, recordDecision, recordOutcome } from '../verify/outcome.js';
import type { AgreementPolicy, Assessed, Verdict } from '../verify/question.js';
import { planFor, type ProofJob } from './job.js';
import { headerPayload, type AgreedHeader, type BlockPin } from './book.js';

export type { AgreedHeader, BlockPin } from './book.js';

/**
 * The header at `pin`, agreed by the job's N (from the book or the cache levels when kept there). Resolves undefined
 * when N providers agree that there is no such block (null); rejects with the agreement's error
 * (-32010, -32011, -32012, -32016) when no N agree.
 */
export async function agreedHeader(job: ProofJob, pin: BlockPin): Promise<AgreedHeader | undefined> {
  const kept = job.headers.get(job.chain, pin, job.required);
  if (kept !== undefined) {
    job.metrics?.header(job.chain.id, 'book');
    return kept;
  }
  const found = await job.headers.fromCache(job.chain, pin, job.required, job.log);
  if (found !== undefined && found !== 'refused' && found.agreed !== undefined) {
    job.metrics?.header(job.chain.id, 'cache');
    return found.agreed;
  }
  if (job.signal.aborted) throw new Error('proof aborted');
  const prior = found !== undefined && found !== 'refused' ? found.prior : undefined;
  job.metrics?.header(job.chain.id, found === 'refused' ? 'refused' : prior !== undefined ? 'topped-up' : 'agreed');
  return agreeOnHeader(job, pin, prior);
}

/** The agreement on the header at `pin` (counting `prior`: the votes of a cached entry of a smaller N). */
function agreeOnHeader(job: ProofJob, pin: BlockPin, prior: Verdict | undefined): Promise<AgreedHeader | undefined> {
  const payload = headerPayload(pin);
  const plan = planFor(job, payload);
  const judging = { payload, ignored: job.chain.ignoredFields, beyondHeads: false };
  const judge = judgeOf(judging);
  const question = { requestId: job.requestId, log: job.log, chain: job.chain, payload, confirmable: true, required: job.required };
  const own: AgreementPolicy = {
    call: callOf(plan, judging),
    expectedMs: expectedLatency,
    deadlineMs: plan.deadlineMs,
    assess: (o) => checkedHeader(job, judge(o), o, pin),
    hedgeDelayMs: undefined,
    onHedge: undefined,
    onOutcome: (a) => recordOutcome(question, a, undefined),
    onDecided: (d) => recordDecision(question, d, job.disputes, undefined),
  };
  const policy = job.policy ? mergeLoopPolicy(own, job.policy(question)) : own;
  return new Promise((resolve, reject) => {
    const run = runAgreement({ candidates: job.candidates, required: job.required, perProvider: job.chain.providerCount < job.chain.upstreams.length, prior }, policy, (end) => {
      job.signal.removeEventListener('abort', stop);
      if (end.kind === 'agreed') {
        const first = end.verdict.members[0]!;
        for (const m of end.verdict.members) if (prior === undefined || !prior.members.includes(m)) job.bytes += m.body.length;
        const result = (JSON.parse(first.body.toString('utf8')) as { result: BlockJson | null }).result;
        if (result === null) return resolve(undefined);
        const agreed: AgreedHeader = { header: checkHeader(result), block: result, members: end.verdict.members, required: job.required };
        job.headers.keep(job.chain, agreed, pin);
        return resolve(agreed);
      }
      if (end.kind === 'error') return reject(end.error);
      if (end.kind === 'refused') return resolve(undefined);
      reject(failureError(question, end, plan.budget));
    });
    const stop = () => run.abort();
    job.signal.addEventListener('abort', stop);
  });
}

/** A vote on a header counts only when its hash is the keccak of its fields (and, by hash, the one asked). */
function checkedHeader(job: ProofJob, a: Assessed, o: Outcome<Upstream, UpstreamResponse>, pin: BlockPin): Assessed {
  if (!a.ok || !o.ok) return a;
  try {
    const result = (JSON.parse(a.body.toString('utf8')) as { result?: BlockJson | null }).result;
    if (result === null || result === undefined) return a;
    const header = checkHeader(result, pin.hash);
    if (pin.number !== undefined && header.number !== pin.number) {
      throw ProofError.mismatch('wrong-block', 'number', `0x${pin.number.toString(16)}`, `0x${header.number.toString(16)}`, 'the header is of another block');
    }
    return a;
  } catch (err) {
    const reason = err instanceof ProofError ? `header proof failed (${err.reason} at ${err.field}): ${err.message}` : `header unreadable: ${(err as Error).message}`;
    chargeProof(job, a.upstream, reason);
    return { upstream: a.upstream, ok: false, reason: a.upstream.secrets.scrub(reason), ms: a.ms, kind: 'proof' };
  }
}

/** A failed proof: a lost vote (distrust), a count in /chains and the metrics, a warning. (The header's failure is recorded as the call's too.) */
export function chargeProof(job: ProofJob, upstream: Upstream, reason: string): void {
  upstream.health.proofsFailed += 1;
  job.metrics?.proof(upstream, false);
  const change = recordVote(upstream.health, false, job.disputes);
  job.log.warn({ upstream: upstream.label, reason: upstream.secrets.scrub(reason) }, 'upstream answer failed its proof: charged, another provider asked');
  if (change === 'distrusted') job.log.warn({ upstream: upstream.label, lost: upstream.health.recentLost }, 'upstream lost too many agreements: distrusted, no longer asked for unverified reads');
}

const perTxLogged = new WeakSet<Upstream>();

/**
 * An eth_getLogs answer that held the proven logs numbered per transaction: counted (/chains,
 * metrics), not charged, logged once per upstream (not when its config says `logIndex:
 * per-transaction`: known already).
 */
export function notePerTxNumbering(job: ProofJob, upstream: Upstream): void {
  upstream.health.logIndexPerTx += 1;
  job.metrics?.logIndexPerTx(upstream);
  if (upstream.logIndex === 'per-transaction' || perTxLogged.has(upstream)) return;
  perTxLogged.add(upstream);
  job.log.warn({ upstream: upstream.label, chain: job.chain.id }, 'upstream numbers eth_getLogs logIndex per transaction, not per block: not charged; the proven logs (numbered per block) are served');
}

/** A proof that held. */
export function creditProof(job: ProofJob, upstream: Upstream): void {
  upstream.health.proofsChecked += 1;
  job.metrics?.proof(upstream, true);
  recordVote(upstream.health, true, job.disputes);
}

/** A material call that failed (transport, node error): the upstream's failure, as any call's. */
export function failedCall(upstream: Upstream, reason: string): void {
  recordFailure(upstream.health, reason, Date.now());
}
