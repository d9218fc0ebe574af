/**
 * Which JSON-RPC errors from an upstream are the provider's trouble rather than the node's
 * answer: ONE table, in one place (lib/verify/README.md "Node errors and provider trouble"). Pure.
 *
 * A node's error is an answer like a result: it votes, and N agreeing errors reach the client
 * as the node sent them (HTTP 200, the client's id). Only the errors listed here are not votes:
 *
 * - `trouble`: this provider cannot answer now (rate limit, capacity, credits, a backend that
 *   failed, a node that lags or has pruned the state asked for). It counts against the provider's
 *   health and the call moves on to another upstream. A result from some upstreams therefore
 *   beats a trouble error from others. A rate limit (label `rate limited`: the forms of
 *   lib/health/rate-limits.ts) is not counted as a failure: the upstream is put on back-off.
 * - `refusal`: this provider refuses this one request (too large a range or result, a method it
 *   does not serve). Not the provider's failure; the call moves on, and when no upstream gives a
 *   vote the client gets the first refusal as the node gave it.
 *
 * A rule matches by code, by message, or both. Errors that carry a contract's answer (code 3,
 * or a message saying "revert") are never trouble nor refusals, whatever their text says: a
 * revert reason may well read "rate limit exceeded".
 *
 * Sources: EIP-1474 (-32002 resource unavailable, -32004 method not supported, -32005 limit
 * exceeded); geth (`header not found`, `missing trie node`, `historical state … is not
 * available`, `required historical state unavailable`); erigon (`state histories … pruned`);
 * nethermind (`… could not be found`, -32002); besu (`World state unavailable`); reth
 * (`unknown block`, `distance to target block exceeds maximum`); providers: Infura (-32005 "daily
 * request count exceeded, request rate limited"), Alchemy (429 "compute units per second
 * capacity"), QuickNode (-32007 "request limit reached", -32009/-32012 credits), TheRPC (-32029),
 * Ankr ("too many requests"), dRPC ("Timeout on upstream", "no available nodes"), generic gateways ("bad gateway",
 * "service unavailable", "upstream … timeout").
 */

import { rateLimitCodes, rateLimitLabel, rateLimitMessage } from '../../health/rate-limits.js';

export type ErrorKind = 'trouble' | 'refusal';

export interface ErrorRule {
  kind: ErrorKind;
  /** The code the rule needs; absent: any code. */
  code?: number;
  /** The message the rule needs; absent: any message. */
  message?: RegExp;
  /** Why (for the table of lib/verify/README.md and the reason logged). */
  why: string;
  /** How the failure's reason starts (default: "provider error" for trouble, "refused" for a refusal). */
  label?: string;
}

/** The table, in order: the first rule that matches decides. */
export const errorRules: readonly ErrorRule[] = [
  // A rate limit first, even when it names a range ("rate limit: too many block range requests").
  { kind: 'trouble', message: rateLimitMessage, why: 'rate limit, capacity, quota or credits (any provider)', label: rateLimitLabel },
  // Refusals of this request's size, before the codes (Infura's -32005 "query returned more
  // than 10000 results" is a refusal, not a rate limit).
  {
    kind: 'refusal',
    message:
      /query returned more than|(block|blocks|query) range (is )?too|range (is )?too (large|wide|big)|too (large|wide|many) (a )?(block )?(range|blocks|results|logs)|response size|results? (set )?(is )?too large|more than \d[\d,]* (results|logs|blocks)|limit(ed)? (the|your) (query|range)|is limited to (a )?[\d,]+|exceeds? max(imum)? (results|logs|blocks|range)|query timeout exceeded|exceed(s|ed)? (the )?max(imum)? block range/i,
    why: 'a limit on eth_getLogs and kin (range, result count, response size)',
    label: 'refused as too large',
  },
  { kind: 'refusal', code: -32601, why: 'method not found: this provider does not serve the method' },
  { kind: 'refusal', code: -32004, why: 'method not supported (EIP-1474)' },
  { kind: 'refusal', message: /method .*(not (available|supported|whitelisted|allowed|enabled))|unsupported method|is not available on (the )?\w+ tier/i, why: 'the provider does not serve the method (plan, tier)' },
  // Rate limits, capacity, credits: the codes of lib/health/rate-limits.ts.
  ...[...rateLimitCodes].map(([code, why]): ErrorRule => ({ kind: 'trouble', code, why, label: rateLimitLabel })),
  { kind: 'trouble', code: -32002, why: 'resource unavailable (EIP-1474; nethermind)' },
  // The provider's backend failed: says nothing about the request.
  {
    kind: 'trouble',
    message: /^(internal (server )?error|internal json-rpc error)\.?$|bad gateway|service (temporarily )?unavailable|gateway time-?out|upstream .*(timeout|timed out|unavailable|error)|timeout on upstream|no (available|healthy) (nodes|upstreams?|backends?)|backend .*unavailable|temporarily unavailable|try again later|request timed out|context deadline exceeded/i,
    why: 'the provider\'s backend failed or timed out (generic internal errors, gateways, dRPC)',
  },
  // A node that lags or prunes: another node can answer.
  {
    kind: 'trouble',
    message: /^header not found$|^unknown block$|missing trie node|historical state .*not available|required historical state unavailable|state (histories|history) .*(pruned|not available)|world state unavailable|pruned|distance to target block exceeds maximum|node is (not )?sync/i,
    why: 'a node that lags (header not found, unknown block) or has pruned the state asked for (geth, erigon, besu, reth)',
  },
];

export interface ErrorVerdict {
  kind: ErrorKind;
  why: string;
  /** How the failure's reason starts. */
  label: string;
}

/**
 * The table's verdict on an upstream's JSON-RPC error, or undefined when it is the node's
 * answer (a vote).
 */
export function errorKind(code: number, message: string): ErrorVerdict | undefined {
  if (code === 3 || /revert/i.test(message)) return undefined;
  for (const rule of errorRules) {
    if (rule.code !== undefined && rule.code !== code) continue;
    if (rule.message !== undefined && !rule.message.test(message)) continue;
    return { kind: rule.kind, why: rule.why, label: rule.label ?? (rule.kind === 'trouble' ? 'provider error' : 'refused') };
  }
  return undefined;
}
