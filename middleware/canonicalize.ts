/**
 * Stage 5, canonicalize and hash. Turns each upstream outcome, as it arrives, into a vote (the
 * canonical form's SHA-256, lib/verify/canonical.ts) or a failure with its reason: transport
 * errors, HTTP errors, non-JSON, a wrong id or shape, a provider error.
 * Reads: ctx.fanout, ctx.payload   Writes: ctx.assessed
 */
import type { Middleware } from '../lib/compose.js';
import { getContext, need, type Assessed } from '../lib/context.js';
import { assessBody } from '../lib/verify/answers.js';

export function canonicalize(): Middleware {
  return function canonicalize(req, _res, next) {
    const ctx = getContext(req);
    const fanout = need(ctx, 'fanout', 'canonicalize');
    const payload = need(ctx, 'payload', 'canonicalize');
    ctx.assessed = (async function* assess(): AsyncGenerator<Assessed> {
      for (let o = await fanout.nextOutcome(); o; o = await fanout.nextOutcome()) {
        if (!o.ok) {
          yield { upstream: o.upstream, ok: false, reason: o.error.message, ms: o.ms };
          continue;
        }
        const a = assessBody(o.value.body, payload);
        yield a.ok
          ? { upstream: o.upstream, ok: true, body: o.value.body, hash: a.hash, ms: o.ms }
          : { upstream: o.upstream, ok: false, reason: a.reason, ms: o.ms };
      }
    })();
    next();
  };
}
