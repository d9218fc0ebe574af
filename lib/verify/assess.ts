/**
 * The judgement of one upstream outcome, as the agreement loop asks for it: a vote with its hash,
 * or a failure with its reason (transport errors, HTTP errors, non-JSON, a wrong id or shape, a
 * provider error, an answer that quotes the upstream's own key). What the canonicalize stage
 * contributes is plain data (a Judging); verify builds the judge from it here.
 */
import type { RpcPayload } from '../jsonrpc/types.js';
import type { Outcome } from '../upstream/fanout.js';
import { loopReason } from '../upstream/loop.js';
import type { Upstream } from '../upstream/registry.js';
import type { UpstreamResponse } from '../upstream/transport/contract.js';
import { assessBody } from './answers/answers.js';
import type { IgnoredFields } from './answers/compared-fields.js';
import { lacksBlock } from './answers/missing.js';
import type { JudgedResponse } from './answers/off-thread.js';
import type { Assessed } from './question.js';

/** What an answer is judged by, for one request (the canonicalize stage's part). */
export interface Judging {
  payload: RpcPayload;
  /** The chain's ignored fields (config `ignoredFields`; undefined: the defaults). */
  ignored: IgnoredFields | undefined;
  /**
   * The calls need a block above every upstream's head: an unknown-block error ("header not
   * found") is then what every node honestly says, the node's answer, not its trouble.
   */
  beyondHeads: boolean;
}

const echoedReason = 'the answer quotes this upstream\'s URL or key (not forwarded)';

/** The judge of one request's outcomes. */
export function judgeOf(judging: Judging): (o: Outcome<Upstream, UpstreamResponse>) => Assessed {
  const { payload, ignored } = judging;
  const asAnswer = judging.beyondHeads ? lacksBlock : undefined;
  return (o) => assessOutcome(o, payload, ignored, asAnswer);
}

/**
 * One outcome → a vote with its hash, or a failure with its reason. A reason quotes what the
 * upstream sent (an error message, a body's start), so it is scrubbed of every configured
 * upstream's secrets here, where it is made: error data, /chains, logs all read it from here.
 * An answer holding the upstream's own key is not a vote, nor a refusal: either would be forwarded as is.
 * A large answer comes judged already (calls.ts, off-thread.ts: the same assessment made in a
 * worker thread); one the thread could not judge is a failure of kind `unchecked`, our side's.
 */
export function assessOutcome(o: Outcome<Upstream, UpstreamResponse>, payload: RpcPayload, ignored?: IgnoredFields, asAnswer?: (message: string) => boolean): Assessed {
  const { upstream } = o;
  if (!o.ok) {
    // Refused by ourselves (a 508 from this very gateway): say so rather than "HTTP 508".
    const reason = upstream.health.loop ? loopReason : upstream.secrets.scrub(o.error.message);
    const error = o.error as { kind?: string; retryAfterMs?: number };
    return { upstream, ok: false, reason, ms: o.ms, kind: error.kind, retryAfterMs: error.retryAfterMs };
  }
  const judged = (o.value as Partial<JudgedResponse>).judged;
  if (judged?.unchecked !== undefined) {
    // The thread's failure may quote what it was reading (an uncaught error's message): scrubbed as any reason.
    return { upstream, ok: false, reason: upstream.secrets.scrub(`the answer (${o.value.body.length} bytes) was not checked: ${judged.unchecked}`), ms: o.ms, kind: 'unchecked' };
  }
  const a = judged ? judged.judgement : assessBody(o.value.body, payload, ignored, upstream.secrets.scrub, asAnswer);
  const echoed = (a.ok || a.refused !== undefined) && (judged ? judged.echoed : upstream.secrets.echoedIn(o.value.body));
  if (!a.ok) {
    if (!a.refused) return { upstream, ok: false, reason: upstream.secrets.scrub(a.reason), ms: o.ms };
    // A refusal is relayed as the node wrote it when no vote comes (agreement.ts refusalEnd, by
    // its hash): one that quotes the upstream's own key stays a refusal (a client can ask for a
    // method a provider refuses at will: not the provider's failure) with no hash to be relayed by.
    if (echoed) return { upstream, ok: false, reason: echoedReason, ms: o.ms, refused: { body: o.value.body } };
    return { upstream, ok: false, reason: upstream.secrets.scrub(a.reason), ms: o.ms, refused: { ...a.refused, body: o.value.body } };
  }
  if (echoed) return { upstream, ok: false, reason: echoedReason, ms: o.ms };
  return { upstream, ok: true, body: o.value.body, hash: a.hash, ms: o.ms, ...(a.ignored && { ignored: a.ignored }) };
}
