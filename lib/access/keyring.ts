/**
 * The client keys of `access:` as the gateway holds them: by SHA-256 digest, never as text, each
 * with its label and compiled rights (a Grant); and how a request presents its key.
 *
 * Why the lookup is timing-safe: a presented key is hashed first, and only its digest is looked
 * up (a Map keyed by the hex digest): no key is ever compared with a key. How long the lookup
 * takes depends on the digest of what the client sent, which the client already knows; at most
 * it could learn, by timing, how much of its digest matches a stored digest, and a stored digest
 * is worth nothing to it: the gateway takes keys, not digests, and finding a key from its SHA-256
 * is out of reach. So timing the answers cannot guess a key character by character, as a plain
 * comparison of key strings would allow. (A timingSafeEqual after the Map hit would compare two
 * strings the Map already found equal: it would add an allocation per request and no safety.)
 */
import { hash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { AccessConfig, AccessKey, AccessRights } from '../../config/types.js';
import { ConfigError } from '../errors.js';
import { KeyFileError, readKeyFileSync } from '../keyfile.js';
import { routeOf } from '../pipeline/route.js';

/** What a key may be made of: URL-safe characters (it may sit in a path segment), 16 to 256 of them. */
export const keyPattern = /^[A-Za-z0-9._~-]{16,256}$/;

/** SHA-256 of a key, lower-case hex: how keys are stored and looked up. */
export function keyDigest(key: string): string {
  // crypto.hash: one call, no Hash object per request (a fifth of createHash's cost).
  return hash('sha256', key, 'hex');
}

/** A key's (or the anonymous tier's) rights, as sets, ready for the per-request checks (rights.ts). */
export interface Rights {
  readonly chains: ReadonlySet<string> | undefined;
  readonly methods: ReadonlySet<string> | undefined;
  readonly denyMethods: ReadonlySet<string>;
  readonly writes: boolean;
  readonly minConfirmations: number | undefined;
  readonly maxConfirmations: number | undefined;
  readonly cacheBypass: boolean;
  readonly admin: boolean;
}

/**
 * Who a request is, once its key is resolved: what the request context carries (ctx.access) for
 * the later stages (the rights of its calls, the cache bypass, a budget stage charging it).
 */
export interface Grant {
  /** As metrics and logs name it: the configured label, `key-<8 hex>`, or `anonymous`. Never the key. */
  readonly label: string;
  readonly tier: 'key' | 'anonymous';
  readonly rights: Rights;
  /** The config entry it comes from (its budget fields, for a budget stage). */
  readonly entry: AccessKey | AccessRights;
}

export interface Keyring {
  /** The key's grant, or undefined for a key the gateway does not know. */
  find(key: string): Grant | undefined;
  /** The anonymous tier's grant; undefined: a request without a key is refused. */
  readonly anonymous: Grant | undefined;
  readonly grants: readonly Grant[];
  /** What find() looks a key up in: each configured key's SHA-256 (lower-case hex) → its grant. No key text. */
  readonly byDigest: ReadonlyMap<string, Grant>;
}

/**
 * The digest of each `keyFile`'s key, by path, read now as `buildKeyring` reads them (a
 * ConfigError for a file that cannot be read or holds no key): a cluster's primary reads them
 * once, so that every worker, a replacement included, knows the same keys.
 */
export function keyFileDigests(access: AccessConfig, readFile?: (path: string) => string): Record<string, string> {
  const digests: Record<string, string> = {};
  for (const [hex, grant] of buildKeyring(access, readFile).byDigest) {
    const file = (grant.entry as AccessKey).keyFile;
    if (file !== undefined && (grant.entry as AccessKey).keySha256 === undefined) digests[file] = hex;
  }
  return digests;
}

/** The section with each `keyFile` found in `digests` given by that digest instead (`keySha256`): no file is read for it. */
export function withKeyFileDigests(access: AccessConfig, digests: Readonly<Record<string, string>>): AccessConfig {
  const keys = access.keys.map((entry) => (entry.keySha256 === undefined && entry.keyFile !== undefined && Object.hasOwn(digests, entry.keyFile) ? { ...entry, keySha256: digests[entry.keyFile]! } : entry));
  return { ...access, keys };
}

export function compileRights(r: AccessRights): Rights {
  return {
    chains: r.chains ? new Set(r.chains) : undefined,
    methods: r.methods ? new Set(r.methods) : undefined,
    denyMethods: new Set(r.denyMethods),
    writes: r.writes,
    minConfirmations: r.minConfirmations,
    maxConfirmations: r.maxConfirmations,
    cacheBypass: r.cacheBypass,
    admin: r.admin,
  };
}

/**
 * The keyring of an `access:` section. A `keyFile` is read now (one line; surrounding whitespace
 * dropped): a file that cannot be read or holds no valid key is a ConfigError naming the path,
 * never the content.
 */
export function buildKeyring(access: AccessConfig, readFile: (path: string) => string = readKeyFileSync): Keyring {
  const byDigest = new Map<string, Grant>();
  const grants: Grant[] = [];
  const problems: string[] = [];
  access.keys.forEach((entry, i) => {
    let hex = entry.keySha256;
    if (hex === undefined && entry.keyFile !== undefined) {
      let text: string | undefined;
      try {
        text = readFile(entry.keyFile).trim();
      } catch (err) {
        problems.push(`access.keys[${i}].keyFile: cannot read ${entry.keyFile}: ${err instanceof KeyFileError ? err.reason : ((err as NodeJS.ErrnoException).code ?? 'error')}`);
      }
      if (text !== undefined) {
        if (keyPattern.test(text)) hex = keyDigest(text);
        else problems.push(`access.keys[${i}].keyFile: ${entry.keyFile} does not hold a key (its content is not shown): one line of 16 to 256 characters among A-Z a-z 0-9 . _ ~ -`);
      }
    }
    if (hex === undefined) return;
    if (byDigest.has(hex)) {
      problems.push(`access.keys[${i}]: the same key as another entry (its value is not shown): give each client its own key`);
      return;
    }
    const grant: Grant = { label: entry.label ?? `key-${hex.slice(0, 8)}`, tier: 'key', rights: compileRights(entry), entry };
    byDigest.set(hex, grant);
    grants.push(grant);
  });
  if (problems.length > 0) throw new ConfigError(problems);
  const anonymous: Grant | undefined = access.anonymous
    ? { label: 'anonymous', tier: 'anonymous', rights: compileRights(access.anonymous), entry: access.anonymous }
    : undefined;
  return {
    anonymous,
    grants,
    byDigest,
    find(key) {
      return byDigest.get(keyDigest(key));
    },
  };
}

/**
 * The key a request presents: `Authorization: Bearer <key>`, else `X-Api-Key: <key>`, else the
 * RPC route's last path segment. `undefined`: none; `null`: an Authorization header of another
 * scheme (Basic…), which is refused rather than ignored.
 */
export function presentedKey(req: IncomingMessage): string | undefined | null {
  const auth = req.headers.authorization;
  if (auth !== undefined) {
    const m = /^\s*bearer\s+(\S+)\s*$/i.exec(auth);
    return m ? m[1]! : null;
  }
  // An empty X-Api-Key (a client's unset variable: Postman's {{apiKey}}) presents no key.
  const header = req.headers['x-api-key'];
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (value) return value;
  return routeOf(req)?.key;
}
