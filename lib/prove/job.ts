/**
 * One request's proof run, as the provers see it: the chain, the call, how upstream calls are
 * made (the fetch stage's plan), the ranked candidates, N, and the hooks that record outcomes.
 * `ask` sends one JSON-RPC call to one upstream (the material of a proof) and counts its bytes.
 */
import type { RpcCall, RpcPayload } from '../jsonrpc/types.js';
import type { Logger } from '../log.js';
import type { Chain, Upstream } from '../upstream/registry.js';
import { Cancellation } from '../upstream/transport/contract.js';
import { callOf, type CallPlan } from '../verify/calls.js';
import { methodClassOf } from '../health/quality.js';
import type { LoopPolicyOf } from '../verify/loop-policy.js';
import type { DisputePolicy } from '../health/health.js';
import type { ProofMetrics } from './metrics.js';
import type { HeaderBook } from './book.js';

export interface ProofJob {
  readonly requestId: string;
  readonly log: Logger;
  readonly chain: Chain;
  readonly call: RpcCall;
  readonly plan: CallPlan;
  readonly candidates: readonly Upstream[];
  readonly required: number;
  readonly disputes: DisputePolicy;
  readonly policy: LoopPolicyOf | undefined;
  readonly metrics: ProofMetrics | undefined;
  readonly headers: HeaderBook;
  /** Aborted when the answer is written or the client left. */
  readonly signal: Cancellation;
  /** Upstream answer bytes fetched for this answer so far (headers included). */
  bytes: number;
}

/** A payload of one call, as the transports send it. */
export function payloadOf(method: string, params: readonly unknown[], id: number | string = 1): RpcPayload {
  const call = { id, method, params };
  return { calls: [call], batch: false, raw: Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, method, params })) };
}

/** The plan of an extra call made for the job (no coalescer: it is not the client's batch). */
export function planFor(job: ProofJob, payload: RpcPayload): CallPlan {
  return { ...job.plan, payload, cls: methodClassOf(payload.calls), coalescer: undefined };
}

/** What one upstream answered to one call: its result, or why there is none (transport, HTTP, a node error). */
export type Asked = { ok: true; result: unknown } | { ok: false; reason: string };

/**
 * An upstream's answer read as JSON, or an error that says so without quoting it: V8's
 * SyntaxError quotes the body's first characters, and a provider key cut there could not be
 * scrubbed from what /chains, the log or a client's error data would show.
 */
export function parseAnswer(body: Buffer, what: string): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new Error(`${what}: the answer is not JSON`);
  }
}

/** Asks one upstream one call; never throws. */
export async function ask(job: ProofJob, upstream: Upstream, method: string, params: readonly unknown[]): Promise<Asked> {
  const payload = payloadOf(method, params);
  try {
    const response = await callOf(planFor(job, payload))(upstream, job.signal);
    job.bytes += response.body.length;
    const parsed = parseAnswer(response.body, method) as { result?: unknown; error?: { code?: unknown; message?: unknown } };
    if (parsed.error !== undefined) return { ok: false, reason: upstream.secrets.scrub(`${method}: node error ${String(parsed.error.code)}: ${String(parsed.error.message)}`) };
    if (!('result' in parsed)) return { ok: false, reason: `${method}: an answer without a result` };
    return { ok: true, result: parsed.result };
  } catch (err) {
    return { ok: false, reason: upstream.secrets.scrub(`${method}: ${(err as Error).message}`) };
  }
}
