/**
 * Probe rounds and head-poll rounds as plain JSON-safe messages (block numbers and chain ids as
 * decimal strings), and their application to another process's registry: `omnigate serve
 * --workers N` probes and polls heads once, in the primary, and each worker records the primary's
 * rounds in its own upstreams' health and heads with the same functions the primary used
 * (lib/server/cluster.ts). Upstreams are matched by their index in the chain's list, which the
 * same config gives every process; a round whose length differs from the chain's is refused.
 */
import { silentLogger } from '../log.js';
import type { Chain } from '../upstream/registry.js';
import { linkUpstream, refreshChain } from './heads.js';
import { applyProbeRound, type ProbeResult, type ProbeRound } from './probe.js';
import { applyHeadPoll, type HeadPoll } from './tracker.js';

export interface WireProbeResult {
  chainId: string | null;
  head: string | null;
  error: string | null;
  /** The error is a rate limit: the provider's wait, ms (null: none given). */
  rateLimited?: { retryAfterMs: number | null };
  ms: number;
}

export interface WireProbeRound {
  at: number;
  /** null: the upstream was not probed (a request loop). */
  results: (WireProbeResult | null)[];
}

export interface WireHeadPoll {
  latest: string | null;
  safe: string | null;
  finalized: string | null;
  tags: 'native' | 'absent' | null;
}

const str = (n: bigint | undefined): string | null => (n === undefined ? null : n.toString());
const big = (s: string | null): bigint | undefined => (s === null ? undefined : BigInt(s));

export function encodeProbeRound(round: ProbeRound): WireProbeRound {
  return {
    at: round.at,
    results: round.results.map((r) => (r === undefined ? null : encodeProbeResult(r))),
  };
}

function encodeProbeResult(r: ProbeResult): WireProbeResult {
  const wire: WireProbeResult = { chainId: str(r.chainId), head: str(r.head), error: r.error ?? null, ms: r.ms };
  if (r.rateLimited) wire.rateLimited = { retryAfterMs: r.rateLimited.retryAfterMs ?? null };
  return wire;
}

export function decodeProbeRound(wire: WireProbeRound): ProbeRound {
  return {
    at: wire.at,
    results: wire.results.map((r) =>
      r === null
        ? undefined
        : r.error === null
          ? { chainId: big(r.chainId), head: big(r.head), ms: r.ms }
          : r.rateLimited
            ? { error: r.error, rateLimited: { retryAfterMs: r.rateLimited.retryAfterMs ?? undefined }, ms: r.ms }
            : { error: r.error, ms: r.ms },
    ),
  };
}

export function encodeHeadPolls(polls: readonly (HeadPoll | undefined)[]): (WireHeadPoll | null)[] {
  return polls.map((p) => (p === undefined ? null : { latest: str(p.latest), safe: str(p.safe), finalized: str(p.finalized), tags: p.tags ?? null }));
}

export function decodeHeadPolls(wire: readonly (WireHeadPoll | null)[]): (HeadPoll | undefined)[] {
  return wire.map((p) =>
    p === null ? undefined : { latest: big(p.latest), safe: big(p.safe), finalized: big(p.finalized), tags: p.tags ?? undefined },
  );
}

/** Records another process's probe round in this chain (silently: the prober logged it). False when it does not fit the chain. */
export function applyWireProbeRound(chain: Chain, wire: WireProbeRound): boolean {
  if (wire.results.length !== chain.upstreams.length) return false;
  applyProbeRound(chain, decodeProbeRound(wire), silentLogger);
  return true;
}

/** Records another process's head-poll round in this chain, then refreshes it (as the tracker does). False when it does not fit the chain. */
export function applyWireHeadPolls(chain: Chain, wire: readonly (WireHeadPoll | null)[]): boolean {
  if (wire.length !== chain.upstreams.length) return false;
  decodeHeadPolls(wire).forEach((poll, i) => {
    if (poll === undefined) return;
    const u = chain.upstreams[i]!;
    linkUpstream(u, chain);
    applyHeadPoll(u, poll);
  });
  refreshChain(chain);
  return true;
}
