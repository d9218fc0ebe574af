/**
 * The text that identifies a single call's question for every node: its method and its
 * parameters in a canonical form (object keys sorted). Two calls with the same key are the same
 * question to any node; the key is refused (undefined) where that cannot be promised: a batch,
 * a parameter that is a JSON number (JSON.parse may read two different numbers as one double;
 * Ethereum's parameters are hex strings), or a key nodes would read under another name
 * (RpcCall.alias). Merged requests (lib/verify/merge.ts) and the cache (lib/cache) key on it.
 */
import stringify from 'json-stable-stringify';
import type { RpcPayload } from './types.js';

/** The key of each payload, computed once: merged requests and the cache both ask for it. */
const keys = new WeakMap<RpcPayload, string | null>();

export function questionKey(payload: RpcPayload): string | undefined {
  const known = keys.get(payload);
  if (known !== undefined) return known ?? undefined;
  const key = keyOf(payload);
  keys.set(payload, key ?? null);
  return key;
}

function keyOf(payload: RpcPayload): string | undefined {
  if (payload.batch) return undefined;
  const call = payload.calls[0]!;
  if (call.alias !== undefined || holdsNumber(call.params)) return undefined;
  const params = stringify(call.params);
  return params === undefined ? undefined : `${call.method}\n${params}`;
}

function holdsNumber(value: unknown): boolean {
  if (typeof value === 'number') return true;
  if (value === null || typeof value !== 'object') return false;
  for (const v of Array.isArray(value) ? value : Object.values(value)) if (holdsNumber(v)) return true;
  return false;
}
