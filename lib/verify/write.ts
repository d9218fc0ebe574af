/**
 * The write path: a write (lib/jsonrpc/writes.ts) asked of one upstream, or of K at once in the
 * chain's broadcast mode. Beside the agreement loop (agreement.ts), not inside it: a write has
 * no quorum, is never hedged, and its calls are never aborted (bytes on their way to a node are
 * not taken back by closing the socket; a call left to finish can still say `already known`).
 *
 * Each outcome is one of:
 * - accepted: a result, or `already known` for a transaction whose hash we know (the node has
 *   it: for the client the write is done; the client gets `result` = the hash). The first wins.
 *   Another 32-byte hash as the result is not accepted: it is counted as unknown (below), the
 *   node may have taken the write.
 * - rejected: the node's own error (nonce too low, insufficient funds): relayed as the node gave
 *   it once no call can still be accepted, unless another call's outcome is unknown (then -32017,
 *   whose data lists the rejection: the write may be on the other node).
 * - not taken: no byte reached the upstream (`UpstreamCallError.sent === false`: the connection
 *   was never made), or the upstream answered that it did not take the write (a rate limit, a
 *   quota, a method it does not serve, HTTP 429): the next candidate gets it.
 * - unknown: the bytes may have reached the upstream and no usable answer came (timeout,
 *   connection lost after the write, HTTP 5xx, a body that is not JSON-RPC, a gateway's
 *   "upstream timeout"): never sent elsewhere; if no call is accepted, the client gets -32017
 *   with the transaction hash.
 * In broadcast mode a failure of one call is not the request's: it ends on the first accepted
 * answer, or once every call has ended.
 */
import { UpstreamsFailedError, WriteOutcomeUnknownError, type GatewayError } from '../errors.js';
import { isAlreadyKnown, mayBroadcast, txHashOf, writeRuleOf } from '../jsonrpc/writes.js';
import type { RpcPayload } from '../jsonrpc/types.js';
import { onBackOff } from '../health/rate-limits.js';
import { FanOut, type Outcome } from '../upstream/fanout.js';
import type { Upstream } from '../upstream/registry.js';
import type { UpstreamResponse } from '../upstream/transport/contract.js';
import { type Assessed, type Bad, type CallPolicy, type Good, type Timers, type Verdict, realTimers } from './question.js';
import { canonicalForm, sha256Hex } from './answers/canonical.js';
import { errorKind } from './answers/trouble.js';

export interface WritePolicy extends CallPolicy {
  /** An outcome → a vote-shaped answer or a failure (the canonicalize stage), for the records and the verdict. */
  assess(outcome: Outcome<Upstream, UpstreamResponse>): Assessed;
  /** How many upstreams get the write at once (1: one, the next only if no byte reached it). */
  broadcast: number;
  /** The transaction hash, when the write is one call whose result is that hash (`already known` stands for it). */
  knownHash?: string;
  /** Each call's outcome as assessed, also after the request ended (health, metrics). */
  onOutcome?(assessed: Assessed, counted: boolean): void;
  timers?: Timers;
}

export type WriteOutcome = 'accepted' | 'known' | 'rejected' | 'not-taken' | 'unknown' | 'wrong-hash';

export type WriteEnd =
  /** `accepted`: a result or `already known` (the verdict's body is then our own answer); else the node's rejection or refusal, relayed. */
  | { kind: 'answered'; verdict: Verdict; accepted: boolean; known: boolean; sentTo: readonly Upstream[] }
  /** The write went to these upstreams (its bytes may be there) and none answered usably: -32017. */
  | { kind: 'unknown'; cause: 'deadline' | 'unanswered' | 'aborted'; sentTo: readonly Upstream[]; failures: readonly Bad[] }
  /** No byte reached any upstream, or every upstream said it did not take the write. */
  | { kind: 'failed'; failures: readonly Bad[]; called: readonly Upstream[] }
  | { kind: 'error'; error: unknown };

export interface WriteRun {
  /** Upstreams called so far, in the order they were started. */
  readonly called: readonly Upstream[];
  /** The client left: end now (the calls are left to finish: they are writes). */
  abort(): void;
}

const hash32 = /^0x[0-9a-f]{64}$/i;

/** Codes and messages that say a provider turned the call away before any node took it. */
const turnedAwayCodes: ReadonlySet<number> = new Set([429, -32005, -32007, -32009, -32012, -32029]);
const turnedAwayMessage = /rate.?limit|too many requests|capacity|request limit|quota|credits?|compute units|throughput|daily (request )?(count|limit)|usage limit/i;

/**
 * What one outcome of a write says. `payload` is the write's request (single calls are read
 * here; a batch's answer is the upstream's as a whole).
 */
export function classifyWriteOutcome(o: Outcome<Upstream, UpstreamResponse>, a: Assessed, payload: RpcPayload, knownHash: string | undefined): WriteOutcome {
  if (!o.ok) {
    const e = o.error as { sent?: boolean; kind?: string; message?: string };
    if (e.sent === false) return 'not-taken';
    // A 429 (the transport's `rate-limited`) turned it away; a 503, even with a Retry-After, may have taken it.
    if ((e.kind === 'rate-limited' || e.kind === 'http-status') && /^HTTP 429\b/.test(e.message ?? '')) return 'not-taken';
    return 'unknown';
  }
  if (a.ok && payload.batch) return 'accepted';
  if (!a.ok && a.refused) return 'not-taken';
  let answer: { result?: unknown; error?: { code?: unknown; message?: unknown } } | undefined;
  try {
    answer = payload.batch ? undefined : (JSON.parse(o.value.body.toString('utf8')) as typeof answer);
  } catch {
    answer = undefined;
  }
  const error = answer !== null && typeof answer === 'object' ? answer.error : undefined;
  if (error !== null && typeof error === 'object') {
    if (knownHash !== undefined && isAlreadyKnown(error)) return 'known';
    const code = typeof error.code === 'number' ? error.code : NaN;
    const message = typeof error.message === 'string' ? error.message : '';
    const verdict = errorKind(code, message);
    if (verdict?.kind === 'refusal') return 'not-taken';
    if (verdict?.kind === 'trouble') return turnedAwayCodes.has(code) || turnedAwayMessage.test(message) ? 'not-taken' : 'unknown';
  }
  if (!a.ok) return 'unknown';
  if (error !== null && typeof error === 'object') return 'rejected';
  // A hash that is not the transaction's: a client would look for a transaction that does not
  // exist. The node may still have taken the write, so it is not sent on.
  const result = answer?.result;
  if (knownHash !== undefined && typeof result === 'string' && hash32.test(result) && result.toLowerCase() !== knownHash) return 'wrong-hash';
  return 'accepted';
}

/** Our answer for a transaction the node already has: `result` = its hash, with the client's id. */
export function knownAnswer(upstream: Upstream, payload: RpcPayload, txHash: string, ms: number): Good {
  const call = payload.calls[0]!;
  const body = Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(call.id)},"result":"${txHash}"}`);
  return { upstream, ok: true, body, hash: sha256Hex(canonicalForm(call.method, { result: txHash })), ms };
}

/** Starts the write at once: the first call (or K in broadcast mode) goes out before this returns. */
export function runWrite(candidates: readonly Upstream[], payload: RpcPayload, policy: WritePolicy, done: (end: WriteEnd) => void): WriteRun {
  const timers = policy.timers ?? realTimers;
  const fanout = new FanOut<Upstream, UpstreamResponse>(candidates, policy.call, policy.expectedMs, timers.now, onBackOff);
  const failures: Bad[] = [];
  /** Called, but no byte of the write reached them (the connection was never made). */
  const notSent = new Set<Upstream>();
  /** The upstreams the write went to (called, less those it never reached). */
  const reached = () => fanout.called.filter((u) => !notSent.has(u));
  let rejection: Good | undefined;
  let unknown = 0;
  let finished = false;

  const finish = (end: WriteEnd) => {
    if (finished) return;
    finished = true;
    timers.clearTimeout(deadline);
    done(end);
  };

  const settle = () => {
    if (fanout.inFlight > 0) return;
    // An unanswered call may have delivered the write: that outranks another node's rejection.
    if (unknown > 0) {
      // Scrubbed, then cut: a key cut in two first would keep its first half.
      if (rejection) failures.push({ upstream: rejection.upstream, ok: false, reason: `rejected it: ${rejection.upstream.secrets.scrub(rejection.body.subarray(0, 4096).toString('utf8')).slice(0, 300)}`, ms: rejection.ms });
      return finish({ kind: 'unknown', cause: 'unanswered', sentTo: reached(), failures });
    }
    if (rejection) return finish({ kind: 'answered', verdict: { hash: rejection.hash, members: [rejection] }, accepted: false, known: false, sentTo: reached() });
    const refusal = failures.find((f) => f.refused?.hash !== undefined);
    if (refusal) {
      const member: Good = { upstream: refusal.upstream, ok: true, body: refusal.refused!.body, hash: refusal.refused!.hash!, ms: refusal.ms };
      return finish({ kind: 'answered', verdict: { hash: member.hash, members: [member] }, accepted: false, known: false, sentTo: reached() });
    }
    finish({ kind: 'failed', failures, called: fanout.called });
  };

  const onOutcome = (o: Outcome<Upstream, UpstreamResponse>) => {
    const a = policy.assess(o);
    const what = classifyWriteOutcome(o, a, payload, policy.knownHash);
    policy.onOutcome?.(a, what === 'accepted' || what === 'known');
    if (finished) return;
    if (!o.ok && (o.error as { sent?: boolean }).sent === false) notSent.add(o.upstream);
    if (what === 'accepted' && a.ok) {
      return finish({ kind: 'answered', verdict: { hash: a.hash, members: [a] }, accepted: true, known: false, sentTo: reached() });
    }
    if (what === 'known') {
      const member = knownAnswer(o.upstream, payload, policy.knownHash!, o.ms);
      return finish({ kind: 'answered', verdict: { hash: member.hash, members: [member] }, accepted: true, known: true, sentTo: reached() });
    }
    if (what === 'rejected' && a.ok) rejection ??= a;
    else if (what === 'wrong-hash' && a.ok) {
      const result = a.upstream.secrets.scrub(a.body.subarray(0, 4096).toString('utf8')).slice(0, 300);
      failures.push({ upstream: a.upstream, ok: false, reason: `answered with a result that is not the transaction's hash ${policy.knownHash}: ${result}`, ms: a.ms });
    } else if (!a.ok) failures.push(a);
    if (what === 'unknown' || what === 'wrong-hash') unknown += 1;
    // Only a write that reached no node, or that a provider turned away, moves on.
    if (what === 'not-taken') fanout.launch(1);
    settle();
  };

  const deadline = timers.setTimeout(() => {
    // The calls still in flight may have delivered it.
    finish({ kind: 'unknown', cause: 'deadline', sentTo: reached(), failures });
  }, policy.deadlineMs);
  fanout.onOutcome((o) => {
    if (!o) return;
    try {
      onOutcome(o);
    } catch (error) {
      finish({ kind: 'error', error });
    }
  });
  try {
    fanout.launch(Math.max(1, policy.broadcast));
  } catch (error) {
    finish({ kind: 'error', error });
  }
  return {
    called: fanout.called,
    abort() {
      if (!finished) finish({ kind: 'unknown', cause: 'aborted', sentTo: reached(), failures });
    },
  };
}

/** The hashes of a request's writes (single call: `txHash`; batch: per member id), for -32017's data. */
export function writeHashes(payload: RpcPayload): { txHash?: string; transactions?: { id: string | number; txHash: string }[] } {
  if (!payload.batch) {
    const txHash = txHashOf(payload.calls[0]!);
    return txHash ? { txHash } : {};
  }
  const transactions = payload.calls.flatMap((c) => {
    const txHash = txHashOf(c);
    return txHash ? [{ id: c.id, txHash }] : [];
  });
  return transactions.length > 0 ? { transactions } : {};
}

/** The hash `already known` may stand for: a single call whose result is its transaction hash. */
export function knownHashOf(payload: RpcPayload): string | undefined {
  if (payload.batch) return undefined;
  const call = payload.calls[0]!;
  return writeRuleOf(call.method)?.resultIsHash ? txHashOf(call) : undefined;
}

/** How many upstreams a write goes to at once: the chain's `writes.broadcast` when every write of it may be broadcast, else 1. */
export function broadcastCount(payload: RpcPayload, chainBroadcast: number | undefined, candidates: number): number {
  if (!chainBroadcast || chainBroadcast <= 1 || !mayBroadcast(payload.calls)) return 1;
  return Math.min(chainBroadcast, candidates);
}

/** -32017 for a write that may have reached `sentTo` unanswered; a 502 (-32011) when it reached none. */
export function writeFailure(end: Extract<WriteEnd, { kind: 'unknown' | 'failed' }>, payload: RpcPayload): GatewayError {
  const failures = end.failures.map((f) => ({ upstream: f.upstream.label, reason: f.reason }));
  const hashes = writeHashes(payload);
  if (end.kind === 'failed') {
    return new UpstreamsFailedError('Upstreams failed: the write reached no upstream, or every upstream turned it away; it was not delivered, sending it again is safe', {
      data: { write: true, ...hashes, failures },
    });
  }
  const lookUp = hashes.txHash ? ` (look up ${hashes.txHash} before sending it again)` : hashes.transactions ? ' (look up its transaction hashes before sending them again)' : '';
  return new WriteOutcomeUnknownError(
    `Write outcome unknown: it was sent to ${end.sentTo.length} upstream${end.sentTo.length === 1 ? '' : 's'} and no answer came${end.cause === 'deadline' ? ' before the deadline' : ''}; it may have been accepted${lookUp}`,
    { data: { ...hashes, upstreams: end.sentTo.map((u) => u.label), failures, cause: end.cause } },
  );
}
