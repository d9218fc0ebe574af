/**
 * `access:`: the client keys and their rights, and the anonymous tier (lib/access applies them).
 * A key written in the file (`key: ${RELAYER_KEY}`) is hashed here: the validated config holds its
 * SHA-256 only, so no dump of the config, no problem message and no later stage ever sees it.
 * No problem ever quotes a key's value.
 */
import { keyDigest, keyPattern } from '../lib/access/keyring.js';
import { isObj, show, unknownKeys, type Obj } from './sections.js';
import type { AccessConfig, AccessKey, AccessRights } from './types.js';

type Report = (path: string, message: string) => void;

/** A label as metrics and logs show it; `anonymous` and `none` are the tier's and the keyless refusals'. */
const labelPattern = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;
const reservedLabels = new Set(['anonymous', 'none']);
const methodName = /^[A-Za-z][A-Za-z0-9_]{0,99}$/;
const budgetKeys = ['creditsPerSecond', 'creditsPerDay', 'maxConcurrent', 'cacheHitCredits', 'methodCredits'];
const rightKeys = ['chains', 'methods', 'denyMethods', 'writes', 'minConfirmations', 'maxConfirmations', 'cacheBypass', ...budgetKeys];
const keyKeys = ['label', 'key', 'keyFile', 'keySha256', 'admin', ...rightKeys];

export function accessSection(value: unknown, report: Report): AccessConfig | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isObj(value)) {
    report('access', 'must be a mapping. Example: access: { keys: [{ label: relayer, key: ${RELAYER_KEY} }] }');
    return undefined;
  }
  unknownKeys(value, ['keys', 'anonymous', 'adminRoutes', 'redis'], 'access', report);
  const adminRoutes = value.adminRoutes ?? 'keys';
  if (adminRoutes !== 'keys' && adminRoutes !== 'open') {
    report('access.adminRoutes', `${show(adminRoutes)} is not keys (/chains and /metrics need a key with admin: true) or open (anyone may read them)`);
  }
  const keys: AccessKey[] = [];
  const rawKeys = value.keys ?? [];
  if (!Array.isArray(rawKeys)) report('access.keys', 'must be a list of keys. Example: keys: [{ label: relayer, key: ${RELAYER_KEY}, minConfirmations: 2 }]');
  else {
    const labels = new Map<string, number>();
    const digests = new Map<string, number>();
    rawKeys.forEach((entry, i) => {
      const key = keyEntry(entry, `access.keys[${i}]`, report);
      if (!key) return;
      if (key.label !== undefined) {
        const first = labels.get(key.label);
        if (first !== undefined) report(`access.keys[${i}].label`, `"${key.label}" is the label of access.keys[${first}] too: each key needs its own (metrics count by label)`);
        else labels.set(key.label, i);
      }
      if (key.keySha256 !== undefined) {
        const first = digests.get(key.keySha256);
        if (first !== undefined) report(`access.keys[${i}]`, `the same key as access.keys[${first}] (its value is not shown): give each client its own key`);
        else digests.set(key.keySha256, i);
      }
      keys.push(key);
    });
  }
  let anonymous: AccessRights | undefined;
  if (value.anonymous !== undefined && value.anonymous !== null && value.anonymous !== false) {
    if (value.anonymous === true) anonymous = rightsOf({}, 'access.anonymous', report);
    else if (!isObj(value.anonymous)) report('access.anonymous', `must be a mapping of rights (or true: every right but admin). Example: anonymous: { chains: [1], maxConfirmations: 1 }`);
    else {
      unknownKeys(value.anonymous, rightKeys, 'access.anonymous', report);
      anonymous = rightsOf(value.anonymous, 'access.anonymous', report);
    }
  }
  if (keys.length === 0 && !anonymous) {
    report('access', 'has neither keys nor an anonymous tier: every request would be refused. Add keys, or anonymous: { … }, or leave access out');
  }
  const redis = redisOf(value.redis, report);
  return { keys, ...(anonymous && { anonymous }), adminRoutes: adminRoutes === 'open' ? 'open' : 'keys', ...(redis && { redis }) };
}

/** `access.redis`: where the replicas share the budgets (the URL is never quoted: it may hold a password). */
function redisOf(value: unknown, report: Report): AccessConfig['redis'] {
  if (value === undefined || value === null) return undefined;
  if (!isObj(value)) {
    report('access.redis', `must be a mapping. Example: redis: { url: redis://127.0.0.1:6379/0, prefix: "omnigate:prod:" }`);
    return undefined;
  }
  unknownKeys(value, ['url', 'prefix', 'timeoutMs'], 'access.redis', report);
  let ok = true;
  const { url, prefix = 'omnigate:', timeoutMs = 50 } = value;
  if (typeof url !== 'string' || !URL.canParse(url) || !/^rediss?:$/.test(new URL(url).protocol)) {
    report('access.redis.url', `${typeof url === 'string' ? 'is not a redis:// or rediss:// URL' : `${show(url)} is not a URL`} (its value is not shown: it may hold a password). Example: url: redis://127.0.0.1:6379/0`);
    ok = false;
  }
  if (typeof prefix !== 'string' || prefix.length > 100) {
    report('access.redis.prefix', `${show(prefix)} is not a string of at most 100 characters. One per deployment. Example: prefix: "omnigate:prod:"`);
    ok = false;
  }
  if (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 10_000) {
    report('access.redis.timeoutMs', `${show(timeoutMs)} is not an integer from 1 to 10000: the longest a request waits for Redis before its replica decides alone. Example: timeoutMs: 50`);
    ok = false;
  }
  return ok ? { url: url as string, prefix: prefix as string, timeoutMs: timeoutMs as number } : undefined;
}

function keyEntry(entry: unknown, path: string, report: Report): AccessKey | undefined {
  if (!isObj(entry)) {
    report(path, 'must be a mapping. Example: { label: relayer, key: ${RELAYER_KEY}, minConfirmations: 2 }');
    return undefined;
  }
  unknownKeys(entry, keyKeys, path, report);
  const given = ['key', 'keyFile', 'keySha256'].filter((k) => entry[k] !== undefined && entry[k] !== null);
  if (given.length !== 1) {
    report(path, `${given.length === 0 ? 'has no key' : `has ${given.join(' and ')}`}: give exactly one of key (its value, from the environment: key: \${RELAYER_KEY}), keyFile (a file holding it) or keySha256 (its SHA-256 in hex)`);
  }
  let label: string | undefined;
  if (entry.label !== undefined && entry.label !== null) {
    if (typeof entry.label !== 'string' || !labelPattern.test(entry.label) || reservedLabels.has(entry.label)) {
      report(`${path}.label`, `${show(entry.label)} is not a label: a short name such as "relayer" (letters, digits, . _ : -, at most 64; not anonymous or none)`);
    } else label = entry.label;
  }
  const out: { -readonly [K in keyof AccessKey]: AccessKey[K] } = { ...rightsOf(entry, path, report) };
  if (label !== undefined) out.label = label;
  if (entry.key !== undefined && entry.key !== null) {
    // The value is never quoted: it is the secret.
    if (typeof entry.key !== 'string' || !keyPattern.test(entry.key)) {
      report(`${path}.key`, 'is not a key (its value is not shown): 16 to 256 characters among A-Z a-z 0-9 . _ ~ - (it may sit in a URL path). Example: key: ${RELAYER_KEY} (e.g. openssl rand -hex 32)');
    } else out.keySha256 = keyDigest(entry.key);
  }
  if (entry.keySha256 !== undefined && entry.keySha256 !== null) {
    if (typeof entry.keySha256 !== 'string' || !/^[0-9a-fA-F]{64}$/.test(entry.keySha256)) {
      report(`${path}.keySha256`, 'is not a SHA-256 in hex (64 hex digits). Example: keySha256: $(printf %s "$KEY" | sha256sum)');
    } else out.keySha256 = entry.keySha256.toLowerCase();
  }
  if (entry.keyFile !== undefined && entry.keyFile !== null) {
    if (typeof entry.keyFile !== 'string' || entry.keyFile.trim() === '' || entry.keyFile.includes('\0')) {
      report(`${path}.keyFile`, `${show(entry.keyFile)} is not a file path. Example: keyFile: /run/secrets/relayer_key`);
    } else out.keyFile = entry.keyFile;
  }
  const admin = entry.admin ?? false;
  if (typeof admin !== 'boolean') report(`${path}.admin`, `${show(admin)} is not true or false (true: it may read /chains and /metrics)`);
  out.admin = admin === true;
  return out;
}

function rightsOf(obj: Obj, path: string, report: Report): AccessRights {
  const rights: { -readonly [K in keyof AccessRights]: AccessRights[K] } = { denyMethods: [], writes: true, cacheBypass: false, admin: false };
  if (obj.chains !== undefined && obj.chains !== null) {
    if (!Array.isArray(obj.chains) || obj.chains.length === 0) report(`${path}.chains`, 'must be a non-empty list of chain ids (leave it out for every chain). Example: chains: [1, 8453]');
    else {
      const ids: string[] = [];
      obj.chains.forEach((c, i) => {
        const text = typeof c === 'number' && Number.isSafeInteger(c) && c >= 0 ? String(c) : typeof c === 'bigint' && c >= 0n ? c.toString() : typeof c === 'string' && /^\d+$/.test(c) ? BigInt(c).toString() : undefined;
        if (text === undefined) report(`${path}.chains[${i}]`, `${show(c)} is not a chain id (a non-negative decimal integer)`);
        else ids.push(text);
      });
      rights.chains = ids;
    }
  }
  for (const key of ['methods', 'denyMethods'] as const) {
    const list = obj[key];
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list)) {
      report(`${path}.${key}`, `must be a list of method names. Example: ${key}: [eth_call, eth_getLogs]`);
      continue;
    }
    const names: string[] = [];
    list.forEach((m, i) => {
      if (typeof m !== 'string' || !methodName.test(m)) report(`${path}.${key}[${i}]`, `${show(m)} is not a method name such as eth_call`);
      else names.push(m);
    });
    rights[key] = names;
  }
  for (const key of ['writes', 'cacheBypass'] as const) {
    const v = obj[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'boolean') report(`${path}.${key}`, `${show(v)} is not true or false`);
    else rights[key] = v;
  }
  for (const key of ['minConfirmations', 'maxConfirmations'] as const) {
    const v = obj[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 1000) report(`${path}.${key}`, `${show(v)} is not an integer from 1 to 1000. Example: ${key}: 2`);
    else rights[key] = v;
  }
  budgetOf(obj, path, report, rights);
  if (rights.minConfirmations !== undefined && rights.maxConfirmations !== undefined && rights.minConfirmations > rights.maxConfirmations) {
    report(`${path}.maxConfirmations`, `${rights.maxConfirmations} is below minConfirmations (${rights.minConfirmations}): no N could be served`);
  }
  return rights;
}

/** The budget keys (enforced by the budget stage, not by lib/access): each checked, absent: unlimited. */
function budgetOf(obj: Obj, path: string, report: Report, rights: { -readonly [K in keyof AccessRights]: AccessRights[K] }): void {
  const numbers: [key: 'creditsPerSecond' | 'creditsPerDay' | 'maxConcurrent' | 'cacheHitCredits', min: number, max: number, integer: boolean, hint: string][] = [
    ['creditsPerSecond', 0, 1e9, false, 'Credits earned per second (above 0). Example: creditsPerSecond: 500'],
    ['creditsPerDay', 1, 1e15, true, 'Credits at most per UTC day. Example: creditsPerDay: 10000000'],
    ['maxConcurrent', 1, 100_000, true, 'Requests in flight at once. Example: maxConcurrent: 20'],
    ['cacheHitCredits', 0, 1e6, false, 'What an answer from the cache costs. Example: cacheHitCredits: 1'],
  ];
  for (const [key, min, max, integer, hint] of numbers) {
    const v = obj[key];
    if (v === undefined || v === null) continue;
    const bad = typeof v !== 'number' || !Number.isFinite(v) || (integer && !Number.isInteger(v)) || v < min || v > max || (key === 'creditsPerSecond' && v === 0);
    if (bad) report(`${path}.${key}`, `${show(v)} is not ${integer ? 'an integer' : 'a number'} from ${key === 'creditsPerSecond' ? 'above 0' : min} to ${max}. ${hint}`);
    else rights[key] = v;
  }
  const weights = obj.methodCredits;
  if (weights === undefined || weights === null) return;
  if (!isObj(weights)) {
    report(`${path}.methodCredits`, 'must be a mapping of method to credits. Example: methodCredits: { eth_getLogs: 100, eth_call: 10 }');
    return;
  }
  const out: Record<string, number> = {};
  for (const [method, v] of Object.entries(weights)) {
    if (!methodName.test(method)) report(`${path}.methodCredits.${method}`, 'is not a method name such as eth_call');
    else if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 1e6) report(`${path}.methodCredits.${method}`, `${show(v)} is not a number from 0 to 1000000 (the credits one call costs)`);
    else Object.defineProperty(out, method, { value: v, enumerable: true, writable: true, configurable: true });
  }
  rights.methodCredits = out;
}
