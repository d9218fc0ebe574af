/**
 * Stage 5, canonicalize and hash. Turns each upstream outcome, as it arrives, into a vote (the
 * canonical form's SHA-256, lib/verify/canonical.ts) or a failure with its reason: transport
 * errors, HTTP errors, non-JSON, a wrong id or shape, a provider error, an answer that quotes
 * the upstream's own key. Reasons are scrubbed of provider keys.
 * Hands the agreement loop (run by the verify stage) the assessment as a function.
 * Reads: ctx.payload, ctx.chain   Writes: ctx.assess
 */
import type { Middleware } from '../lib/pipeline/compose.js';
import { getContext, need } from '../lib/pipeline/context.js';
import type { Assessed } from '../lib/verify/question.js';
import type { RpcPayload } from '../lib/jsonrpc/types.js';
import type { Outcome } from '../lib/upstream/fanout.js';
import { loopReason } from '../lib/upstream/loop.js';
import { missingBlockErrors } from '../lib/verify/missing.js';
import type { Upstream } from '../lib/upstream/registry.js';
import type { UpstreamResponse } from '../lib/upstream/transport/contract.js';
import { assessBody } from '../lib/verify/answers.js';
import type { IgnoredFields } from '../lib/verify/canonical.js';

const lacksBlock = (message: string) => missingBlockErrors.some((re) => re.test(message));

export function canonicalize(): Middleware {
  return function canonicalize(req, _res, next) {
    const ctx = getContext(req);
    need(ctx, 'fetch', 'canonicalize');
    const payload = need(ctx, 'payload', 'canonicalize');
    // Above every head (classify), "header not found" is what every node honestly says: an answer.
    const asAnswer = ctx.beyondHeads ? lacksBlock : undefined;
    ctx.assess = (o) => assessOutcome(o, payload, ctx.chain?.ignoredFields, asAnswer);
    next();
  };
}

/**
 * One outcome → a vote with its hash, or a failure with its reason. A reason quotes what the
 * upstream sent (an error message, a body's start), so it is scrubbed of every configured
 * upstream's secrets here, where it is made: error data, /chains, logs all read it from here.
 * An answer holding the upstream's own key is not a vote: it would be forwarded as is.
 */
export function assessOutcome(o: Outcome<Upstream, UpstreamResponse>, payload: RpcPayload, ignored?: IgnoredFields, asAnswer?: (message: string) => boolean): Assessed {
  const { upstream } = o;
  if (!o.ok) {
    // Refused by ourselves (a 508 from this very gateway): say so rather than "HTTP 508".
    const reason = upstream.health.loop ? loopReason : upstream.secrets.scrub(o.error.message);
    return { upstream, ok: false, reason, ms: o.ms, kind: (o.error as { kind?: string }).kind };
  }
  const a = assessBody(o.value.body, payload, ignored, upstream.secrets.scrub, asAnswer);
  if (!a.ok) {
    const reason = upstream.secrets.scrub(a.reason);
    return a.refused ? { upstream, ok: false, reason, ms: o.ms, refused: { ...a.refused, body: o.value.body } } : { upstream, ok: false, reason, ms: o.ms };
  }
  if (upstream.secrets.echoedIn(o.value.body)) {
    return { upstream, ok: false, reason: 'the answer quotes this upstream\'s URL or key (not forwarded)', ms: o.ms };
  }
  return { upstream, ok: true, body: o.value.body, hash: a.hash, ms: o.ms, ...(a.ignored && { ignored: a.ignored }) };
}
