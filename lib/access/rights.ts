/**
 * What a grant (a key, or the anonymous tier) may do, checked: its chains and its N for the
 * request's route, its methods for each call. Pure: each check returns the refusal (a 401 or
 * 403 GatewayError with its reason in `data`) or undefined. No refusal ever holds the key; a
 * 403 names the grant by its label.
 */
import { ForbiddenError, UnauthorizedError, type GatewayError } from '../errors.js';
import { writeRuleOf } from '../jsonrpc/writes.js';
import type { RpcId } from '../jsonrpc/types.js';
import type { Grant } from './keyring.js';

/** Why a request (or a batch member) was refused: the `reason` of the error's data and of the refusals metric. */
export type Refusal = 'missing' | 'unknown' | 'scheme' | 'chain' | 'method' | 'write' | 'confirmations' | 'admin' | 'second' | 'day' | 'concurrent';

const challenge = { 'WWW-Authenticate': 'Bearer realm="omnigate"' };
const how = 'send Authorization: Bearer <key> or X-Api-Key: <key>, or put the key after the chain id (/rpc/<chainId>/<key>)';

/** 401: no key where one is needed, a key the gateway does not know, or an Authorization of another scheme. */
export function unauthorized(reason: 'missing' | 'unknown' | 'scheme', id: RpcId | null): GatewayError {
  const why =
    reason === 'missing' ? 'this gateway needs a client key' : reason === 'unknown' ? 'the client key is not known to this gateway' : 'the Authorization header is not of the Bearer scheme';
  return new UnauthorizedError(`Unauthorized: ${why}: ${how}`, { id, data: { reason }, headers: challenge });
}

/** The N a request is served with under this grant, or the 403 for a path's `<n>` outside its bounds. */
export function confirmationsFor(grant: Grant, override: number | undefined, chainDefault: number, id: RpcId | null): number | GatewayError {
  const { minConfirmations: min, maxConfirmations: max } = grant.rights;
  if (override !== undefined) {
    if ((min === undefined || override >= min) && (max === undefined || override <= max)) return override;
    const bound = min !== undefined && override < min ? `at least ${min}` : `at most ${max}`;
    return new ForbiddenError(`Forbidden: ${grant.label} may ask for ${bound} confirmations, not ${override}`, {
      id,
      data: { reason: 'confirmations', key: grant.label, asked: override, ...(min !== undefined && { min }), ...(max !== undefined && { max }) },
    });
  }
  // The chain's N, brought within the grant's bounds: a relayer's key held to 2, an anonymous tier to 1.
  return Math.max(min ?? 1, Math.min(max ?? chainDefault, chainDefault));
}

/** The 403 for a chain the grant may not use. */
export function chainRefusal(grant: Grant, chainId: string, id: RpcId | null): GatewayError | undefined {
  const chains = grant.rights.chains;
  if (chains === undefined || chains.has(chainId)) return undefined;
  return new ForbiddenError(`Forbidden: ${grant.label} may not use chain ${chainId}`, { id, data: { reason: 'chain', key: grant.label, chain: chainId } });
}

/** The 403 for a method the grant may not call: not in `methods`, in `denyMethods`, or a write without `writes`. */
export function methodRefusal(grant: Grant, method: string, id: RpcId | null): GatewayError | undefined {
  const r = grant.rights;
  const write = !r.writes && writeRuleOf(method) !== undefined;
  if (!write && !r.denyMethods.has(method) && (r.methods === undefined || r.methods.has(method))) return undefined;
  return new ForbiddenError(`Forbidden: ${grant.label} may not call ${method}${write ? ' (a write: the key is read-only)' : ''}`, {
    id,
    data: { reason: write ? 'write' : 'method', key: grant.label, method },
  });
}

/** The 403 for /chains or /metrics read with a key that is not an admin key. */
export function adminRefusal(grant: Grant, path: string): GatewayError | undefined {
  if (grant.rights.admin) return undefined;
  return new ForbiddenError(`Forbidden: ${path} needs an admin key (access.keys[].admin: true)`, { id: null, data: { reason: 'admin', key: grant.label } });
}
