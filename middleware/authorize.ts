/**
 * The door (lib/access), as two thin stages; rpcPipeline adds them only when the config has
 * `access:`.
 *
 * `identifyClient`, a hook of the parse stage (once the payload is read, so that a refusal echoes
 * the client's id, and before the route's chain is checked, so that a client without a valid key
 * learns nothing of the chains): the request's key (Bearer, X-Api-Key or the path's last segment)
 * → its grant, or 401.
 * Reads: req headers and route, ctx.payload   Writes: ctx.access
 *
 * `authorize`, after parse: the route's chain and `<n>` checked against the grant's rights (403),
 * and N brought within the grant's bounds when the path gives none. A batch refused here or by
 * identifyClient is refused as a whole (its route and key are one).
 * Reads: ctx.access, ctx.payload, ctx.chain, ctx.confirmationsOverride   Writes: ctx.confirmationsOverride
 *
 * `authorizeCall`, the first member stage (runMembers: on the request for a single call, on each
 * member for a batch): the call's method checked against the grant's (403), so that a batch
 * answers a forbidden member alone with its error and the others as usual.
 * Reads: ctx.access, ctx.payload   Writes: nothing
 */
import type { Access } from '../lib/access/access.js';
import type { Middleware } from '../lib/pipeline/compose.js';
import type { ParseJsonRpcOptions } from './parse-jsonrpc.js';
import { getContext, need } from '../lib/pipeline/context.js';

/** The parse stage's `identify` hook: the request's grant on ctx.access, or its 401. */
export function identifyClient(access: Access): NonNullable<ParseJsonRpcOptions['identify']> {
  return function identifyClient(req, ctx) {
    const payload = ctx.payload!;
    const grant = access.identify(req, payload.batch ? null : payload.calls[0]!.id);
    if (grant instanceof Error) return grant;
    ctx.access = grant;
    return undefined;
  };
}

export function authorize(access: Access): Middleware {
  return function authorize(req, _res, next) {
    const ctx = getContext(req);
    const grant = need(ctx, 'access', 'authorize');
    const payload = need(ctx, 'payload', 'authorize');
    const chain = need(ctx, 'chain', 'authorize');
    const id = payload.batch ? null : payload.calls[0]!.id;
    const n = access.admit(grant, chain.id, ctx.confirmationsOverride, chain.confirmations, id);
    if (typeof n !== 'number') return next(n);
    if (n !== (ctx.confirmationsOverride ?? chain.confirmations)) ctx.confirmationsOverride = n;
    next();
  };
}

export function authorizeCall(access: Access): Middleware {
  return function authorizeCall(req, _res, next) {
    const ctx = getContext(req);
    const grant = ctx.access;
    if (grant === undefined) return next();
    const call = need(ctx, 'payload', 'authorizeCall').calls[0]!;
    next(access.call(grant, call.method, call.id));
  };
}
