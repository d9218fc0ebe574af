/**
 * An upstream's provider rate-limiting us: what such an answer looks like, and the back-off it
 * earns. Rate limits are not failures: an upstream on back-off keeps its failure counts, is not
 * cooled down or ejected for longer than the back-off, and is simply not asked (calls, probes,
 * head polls) until `rateLimitedUntil`, so that retries do not burn the provider's quota.
 *
 * The back-off is the provider's `Retry-After` (seconds or an HTTP date) when it gives one, else
 * `baseBackOffMs` doubling with each episode since the upstream's last success; within
 * `[minBackOffMs, maxBackOffMs]` either way. An episode starts with the first rate limit after
 * the back-off ended; rate limits of calls that were in flight meanwhile extend it (to their own
 * Retry-After) but neither start an episode nor double the next back-off.
 *
 * The forms of a rate-limit answer (a JSON-RPC error in an HTTP 200, from any transport), with
 * their sources; the HTTP forms (429, 503 with Retry-After) are the transport's:
 *
 * | Code | Message | Who |
 * |---|---|---|
 * | any | rate limit, too many requests, capacity, quota, credits, compute units, throughput, daily count, usage limit, limit exceeded / reached | Infura ("daily request count exceeded, request rate limited"), Alchemy ("Your app has exceeded its compute units per second capacity"), Ankr ("Too many requests"), QuickNode ("request limit reached"), generic gateways |
 * | 429 | any | HTTP 429 written as a JSON-RPC code (Alchemy and others) |
 * | -32005 | any | EIP-1474 "limit exceeded"; Infura's rate limits |
 * | -32007 | any | QuickNode: request limit reached |
 * | -32009 | any | QuickNode: credits or rate limit |
 * | -32012 | any | QuickNode: credits exhausted |
 * | -32029 | any | TheRPC: rate limited (with HTTP 200) |
 *
 * A message of the list above with code 3 or a "revert" is a contract's answer, never a rate
 * limit (lib/verify/answers/trouble.ts decides answers in that order).
 */
import type { Logger } from '../log.js';
import type { Health } from './health.js';

/** The messages of rate limits, capacity, quotas and credits (any provider). */
export const rateLimitMessage =
  /rate.?limit|too many requests|exceeded .*capacity|capacity (exceeded|reached)|request limit|quota|credits?|compute units|throughput|daily (request )?(count|limit)|usage limit|limit (exceeded|reached)/i;

/** JSON-RPC codes that mean a rate limit whatever the message: code → who uses it. */
export const rateLimitCodes: ReadonlyMap<number, string> = new Map([
  [429, 'HTTP 429 as a JSON-RPC code (Alchemy and others)'],
  [-32005, 'limit exceeded (EIP-1474; Infura rate limits)'],
  [-32007, 'request limit reached (QuickNode)'],
  [-32009, 'credits or rate limit (QuickNode)'],
  [-32012, 'credits exhausted (QuickNode)'],
  [-32029, 'rate limited (TheRPC)'],
]);

/** Whether a JSON-RPC error is a rate limit (the probes' and head polls' reading; answers are judged by trouble.ts). */
export function isRateLimitError(code: number, message: string): boolean {
  if (code === 3 || /revert/i.test(message)) return false;
  return rateLimitCodes.has(code) || rateLimitMessage.test(message);
}

/** How the reason of a rate-limited answer starts ("rate limited -32005: …"), after a batch member's prefix if any. */
export const rateLimitLabel = 'rate limited';
const labelled = /(?:^|: )rate limited -?\d+: /;
/** Whether an answer's failure reason is a JSON-RPC rate limit (trouble.ts labels them so). */
export const isRateLimitReason = (reason: string): boolean => labelled.test(reason);

export const minBackOffMs = 1_000;
export const baseBackOffMs = 1_000;
export const maxBackOffMs = 60_000;

/** The back-off of an episode: the provider's Retry-After, else base × 2^(episode − 1); within the bounds. */
export function backOffMs(episode: number, retryAfterMs: number | undefined): number {
  const ms = retryAfterMs !== undefined && Number.isFinite(retryAfterMs) ? retryAfterMs : baseBackOffMs * 2 ** Math.min(30, Math.max(0, episode - 1));
  return Math.min(maxBackOffMs, Math.max(minBackOffMs, ms));
}

/** Whether the upstream is on back-off now (epoch ms). */
export const rateLimited = (h: Health, now: number): boolean => h.rateLimitedUntil > now;

/**
 * Whether an upstream is on back-off now: the agreement loop's and the write's fan-out ask the
 * others first when it was put on back-off after the request's candidates were ranked.
 */
export const onBackOff = (u: { health: Health }): boolean => u.health.rateLimitedUntil > Date.now();

/**
 * Records a rate-limit answer on the health record: the back-off, the counts, the reason. Not a
 * failure. Returns whether it started an episode (the caller logs it then, once).
 */
export function recordRateLimit(h: Health, reason: string, retryAfterMs: number | undefined, now: number): boolean {
  h.rateLimits += 1;
  h.lastError = reason;
  const episode = h.rateLimitedUntil <= now;
  if (episode) h.rateLimitEpisodes += 1;
  const until = now + backOffMs(h.rateLimitEpisodes, retryAfterMs);
  if (until > h.rateLimitedUntil) h.rateLimitedUntil = until;
  return episode;
}

/** recordRateLimit, and the one warning of an episode (the upstream by its redacted label). */
export function noteRateLimit(
  u: { label: string; chainId: string; health: Health },
  reason: string,
  retryAfterMs: number | undefined,
  log: Logger,
  now = Date.now(),
): void {
  if (!recordRateLimit(u.health, reason, retryAfterMs, now)) return;
  log.warn(
    { chain: u.chainId, upstream: u.label, reason, backOffMs: u.health.rateLimitedUntil - now, episode: u.health.rateLimitEpisodes },
    'upstream rate-limited us: not asked until its back-off ends',
  );
}
