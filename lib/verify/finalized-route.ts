/**
 * The finalized route (`/finalized/rpc/<chainId>`, `/confirmations/<n>/finalized/rpc/<chainId>`):
 * `latest`, `safe` and `finalized` (and a block parameter left out, which nodes read as `latest`)
 * are pinned to the highest block that at least N providers report as finalized, so that such
 * reads become confirmable and cacheable; `eth_blockNumber` is answered with that number.
 * The number never goes backwards on a chain: when a provider's finalized head drops, the route
 * keeps its number, and the agreement asks the providers that have the block (-32016 when fewer
 * than N do).
 */
import { inRotation } from '../health/heads.js';
import { pinAtOf } from '../jsonrpc/classify.js';
import type { CustomMethods } from '../jsonrpc/methods.js';
import type { RpcCall, RpcPayload } from '../jsonrpc/types.js';
import type { Chain, Upstream } from '../upstream/registry.js';
import { assessBody, scanText } from './answers/answers.js';
import type { Verdict } from './question.js';

/** The route's number per chain and N, never lowered. */
const floors = new WeakMap<Chain, Map<number, bigint>>();

/** Each provider's upstream with the highest finalized head (one per provider, in rotation). */
function finalizedByProvider(chain: Chain): { upstream: Upstream; finalized: bigint }[] {
  const best = new Map<string, { upstream: Upstream; finalized: bigint }>();
  for (const u of chain.upstreams) {
    const f = u.health.finalized;
    if (f === undefined || !inRotation(u)) continue;
    const known = best.get(u.provider);
    if (known === undefined || f > known.finalized) best.set(u.provider, { upstream: u, finalized: f });
  }
  return [...best.values()].sort((a, b) => (a.finalized === b.finalized ? 0 : a.finalized > b.finalized ? -1 : 1));
}

/**
 * The route's finalized block for N `required`: the highest block at least N providers report as
 * finalized, or the number this route gave before if that is higher (it never goes back).
 * Undefined while fewer than N providers report one and none was given before.
 */
export function routeFinalized(chain: Chain, required: number): bigint | undefined {
  const reports = finalizedByProvider(chain);
  const now = reports.length >= required ? reports[required - 1]!.finalized : undefined;
  let byN = floors.get(chain);
  if (!byN) floors.set(chain, (byN = new Map()));
  const before = byN.get(required);
  const block = before === undefined ? now : now === undefined || now < before ? before : now;
  if (block !== undefined) byN.set(required, block);
  return block;
}

/**
 * Raises the route's block for N `required` to `block` (what another replica gave, shared through
 * Redis) if it is higher; returns the route's block after.
 */
export function raiseRouteFinalized(chain: Chain, required: number, block: bigint): bigint {
  let byN = floors.get(chain);
  if (!byN) floors.set(chain, (byN = new Map()));
  const before = byN.get(required);
  const after = before === undefined || block > before ? block : before;
  byN.set(required, after);
  return after;
}

const moving = new Set(['latest', 'safe', 'finalized']);
const isMoving = (v: unknown): boolean => v === undefined || v === null || (typeof v === 'string' && moving.has(v.toLowerCase()));

/**
 * The payload with every moving pin (latest, safe, finalized, a left-out block parameter, a
 * filter's left-out range ends) replaced by `block`; undefined when nothing moved or the body
 * holds a number that would not be written back as the client wrote it.
 */
export function pinnedToFinalized(payload: RpcPayload, block: bigint, custom: CustomMethods): RpcPayload | undefined {
  const hex = `0x${block.toString(16)}`;
  const swap = (v: unknown): unknown => {
    if (isMoving(v)) return hex;
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
      const o = v as Record<string, unknown>;
      if (o.blockHash === undefined && 'blockNumber' in o && isMoving(o.blockNumber)) return { ...o, blockNumber: hex };
    }
    return v;
  };
  const rewrite = (call: RpcCall): RpcCall => {
    const at = pinAtOf(call.method, custom);
    if (at?.kind === 'block') {
      const value = call.params[at.at];
      const next = swap(value);
      if (next === value) return call;
      const params = [...call.params];
      while (params.length < at.at) params.push(null);
      params[at.at] = next;
      return { ...call, params };
    }
    if (at?.kind === 'filter') {
      const f = call.params[0];
      if (typeof f !== 'object' || f === null || Array.isArray(f)) return call;
      const filter = f as Record<string, unknown>;
      if (filter.blockHash !== undefined) return call;
      const from = isMoving(filter.fromBlock) ? hex : filter.fromBlock;
      const to = isMoving(filter.toBlock) ? hex : filter.toBlock;
      if (from === filter.fromBlock && to === filter.toBlock) return call;
      return { ...call, params: [{ ...filter, fromBlock: from, toBlock: to }, ...call.params.slice(1)] };
    }
    return call;
  };
  const calls = payload.calls.map(rewrite);
  if (calls.every((c, i) => c === payload.calls[i])) return undefined;
  if (scanText(payload.raw.toString('utf8')).inexact.length > 0) return undefined;
  const request = (c: RpcCall) => ({ jsonrpc: '2.0', id: c.id, method: c.method, params: c.params });
  const raw = Buffer.from(JSON.stringify(payload.batch ? calls.map(request) : request(calls[0]!)));
  return { calls, batch: payload.batch, raw };
}

/**
 * `eth_blockNumber` on the finalized route: the route's number, vouched for by the N providers
 * that report it (or a higher one) as finalized, with no upstream call. Undefined when fewer than
 * N providers report it now (the route's number is kept from before): the request then goes to
 * the upstreams as pinned reads do.
 */
export function finalizedBlockNumber(chain: Chain, call: RpcCall, block: bigint, required: number): Verdict | undefined {
  const vouching = finalizedByProvider(chain).filter((r) => r.finalized >= block).slice(0, required);
  if (vouching.length < required) return undefined;
  const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: call.id, result: `0x${block.toString(16)}` }));
  const assessed = assessBody(body, { calls: [call], batch: false });
  if (!assessed.ok) return undefined;
  return { hash: assessed.hash, members: vouching.map((r) => ({ upstream: r.upstream, ok: true as const, body, hash: assessed.hash, ms: 0 })) };
}
