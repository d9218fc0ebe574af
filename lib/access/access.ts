/**
 * The door of the balancer, built once from `access:`: who a request is (its key's grant, the
 * anonymous tier, or a 401), whether its route's chain and N are its to use (403), whether each
 * call's method is (403, per batch member), and whether it may read /chains and /metrics. Each
 * request and each refusal is counted per grant label (metrics.ts). The stages are
 * middleware/authorize.ts; without `access:` none of this is built and no request pays for it.
 */
import type { IncomingMessage } from 'node:http';
import type { AccessConfig } from '../../config/types.js';
import type { GatewayError } from '../errors.js';
import type { RpcId } from '../jsonrpc/types.js';
import type { Registry as PromRegistry } from 'prom-client';
import { buildKeyring, presentedKey, type Grant, type Keyring } from './keyring.js';
import { AccessCounts } from './metrics.js';
import { adminRefusal, chainRefusal, confirmationsFor, methodRefusal, unauthorized } from './rights.js';

export interface Access {
  readonly keyring: Keyring;
  readonly counts: AccessCounts;
  /** Whether /chains and /metrics need an admin key. */
  readonly adminRoutes: 'keys' | 'open';
  /** The request's grant, or its 401 (counted). */
  identify(req: IncomingMessage, id: RpcId | null): Grant | GatewayError;
  /**
   * The N the grant is served with on this route (the path's `<n>`, else the chain's brought
   * within its bounds), or the 403 for its chain or `<n>` (counted).
   */
  admit(grant: Grant, chainId: string, override: number | undefined, chainDefault: number, id: RpcId | null): number | GatewayError;
  /** The 403 for one call's method (counted), or undefined. */
  call(grant: Grant, method: string, id: RpcId): GatewayError | undefined;
  /** The 401 or 403 for a read of /chains or /metrics, or undefined (allowed). */
  admin(req: IncomingMessage, path: string): GatewayError | undefined;
}

export function createAccess(config: AccessConfig, options: { registry?: PromRegistry; readFile?: (path: string) => string } = {}): Access {
  const keyring = buildKeyring(config, options.readFile);
  const counts = new AccessCounts(options.registry);
  const identify = (req: IncomingMessage, id: RpcId | null): Grant | GatewayError => {
    const key = presentedKey(req);
    if (key === undefined || key === '') {
      if (keyring.anonymous) return keyring.anonymous;
      counts.refused('none', 'missing');
      return unauthorized('missing', id);
    }
    const grant = key === null ? undefined : keyring.find(key);
    if (grant !== undefined) return grant;
    const reason = key === null ? 'scheme' : 'unknown';
    counts.refused('none', reason);
    return unauthorized(reason, id);
  };
  return {
    keyring,
    counts,
    adminRoutes: config.adminRoutes,
    identify(req, id) {
      const grant = identify(req, id);
      if (!(grant instanceof Error)) counts.request(grant.label);
      return grant;
    },
    admit(grant, chainId, override, chainDefault, id) {
      const refused = chainRefusal(grant, chainId, id);
      const n = refused ?? confirmationsFor(grant, override, chainDefault, id);
      if (typeof n !== 'number') counts.refused(grant.label, refused ? 'chain' : 'confirmations');
      return n;
    },
    call(grant, method, id) {
      const refused = methodRefusal(grant, method, id);
      if (refused) counts.refused(grant.label, (refused.data as { reason: 'method' | 'write' }).reason);
      return refused;
    },
    admin(req, path) {
      if (config.adminRoutes === 'open') return undefined;
      const key = presentedKey(req);
      const grant = key === undefined || key === '' ? undefined : identify(req, null);
      if (grant === undefined) {
        counts.refused('none', 'missing');
        return unauthorized('missing', null);
      }
      if (grant instanceof Error) return grant;
      const refused = adminRefusal(grant, path);
      if (refused) counts.refused(grant.label, 'admin');
      return refused;
    },
  };
}
