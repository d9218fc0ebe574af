/**
 * Stage 5, canonicalize and hash. Turns each upstream outcome, as it arrives, into a vote (the
 * canonical form's SHA-256, lib/verify/canonical.ts) or a failure with its reason: transport
 * errors, HTTP errors, non-JSON, a wrong id or shape, a provider error.
 * Reads: ctx.fanout, ctx.payload   Writes: ctx.assessed
 */
import type { Middleware } from '../lib/compose.js';
import { getContext, need, type Assessed } from '../lib/context.js';
import type { RpcPayload } from '../lib/jsonrpc/types.js';
import type { Outcome } from '../lib/upstream/fanout.js';
import type { Upstream } from '../lib/upstream/registry.js';
import type { UpstreamResponse } from '../lib/upstream/transport.js';
import { assessBody } from '../lib/verify/answers.js';

export function canonicalize(): Middleware {
  return function canonicalize(req, _res, next) {
    const ctx = getContext(req);
    const fanout = need(ctx, 'fanout', 'canonicalize');
    const payload = need(ctx, 'payload', 'canonicalize');
    ctx.assessed = {
      subscribe(listener) {
        fanout.onOutcome((o) => listener(o && assessOutcome(o, payload)));
      },
    };
    next();
  };
}

/** One outcome → a vote with its hash, or a failure with its reason. */
export function assessOutcome(o: Outcome<Upstream, UpstreamResponse>, payload: RpcPayload): Assessed {
  if (!o.ok) return { upstream: o.upstream, ok: false, reason: o.error.message, ms: o.ms };
  const a = assessBody(o.value.body, payload);
  return a.ok
    ? { upstream: o.upstream, ok: true, body: o.value.body, hash: a.hash, ms: o.ms }
    : a.refused
      ? { upstream: o.upstream, ok: false, reason: a.reason, ms: o.ms, refused: { ...a.refused, body: o.value.body } }
      : { upstream: o.upstream, ok: false, reason: a.reason, ms: o.ms };
}
