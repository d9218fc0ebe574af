/**
 * Request loops: an upstream that is the gateway itself (a config listing the gateway's own
 * URL), or a cycle of gateways listing one another. Without a check, one probe comes back as a
 * client request, is fanned out again, and so on until timeouts: one call became ~120.
 *
 * Every upstream call carries `Via: 1.1 omnigate-<token>`, with a random token per upstream, after
 * the omnigate entries of the request being served (so the entries of every gateway on the way
 * travel along). An incoming request whose Via holds one of our own tokens is our own call come
 * back through that upstream: it is refused at once (508, -32014) and that upstream is a loop.
 * Tokens are per upstream, not per process, so no provider learns a token that could mark
 * another upstream; a request with more than `maxHops` omnigate entries is refused too. The
 * processes of `omnigate serve --workers N` derive their tokens from one seed, so a call of one
 * that comes back to another is refused at once too.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { LoopDetectedError, type GatewayError } from '../errors.js';
import type { Logger } from '../log.js';

/** Omnigate entries a request may carry in Via before it is refused as a loop. */
export const maxHops = 8;

const entry = /(?:^|,)\s*(?:HTTP\/)?[\d.]+\s+omnigate-([A-Za-z0-9_-]{1,64})/g;

/**
 * A fresh token for one upstream (72 random bits, base64url); with `seed`, the token of that
 * upstream (`key`: its chain, index and URL) derived from it, the same in every process given the
 * seed (the workers of `omnigate serve --workers N` and their primary: a call of one that comes
 * back to another is known as a loop), and still one token per upstream.
 */
export function newHopToken(seed?: Buffer, key = ''): string {
  if (seed === undefined) return randomBytes(9).toString('base64url');
  return createHmac('sha256', seed).update(key).digest().subarray(0, 9).toString('base64url');
}

/** The Via entry of one hop. */
export function viaEntry(token: string): string {
  return `1.1 omnigate-${token}`;
}

/** The omnigate tokens of a Via header, in order (other proxies' entries are left out). */
export function hopTokens(via: string | string[] | undefined): string[] {
  if (via === undefined) return [];
  const text = Array.isArray(via) ? via.join(',') : via;
  if (!text.includes('omnigate-')) return [];
  return [...text.matchAll(entry)].map((m) => m[1]!);
}

/** The reason shown for an upstream found to be a loop (/chains lastError, logs). */
export const loopReason = 'request loop: this upstream is the gateway itself (or leads back to it)';

/** Where a token of ours leads: the upstream it was sent to (the registry's `loopThrough`). */
export interface LoopTargets {
  loopThrough(tokens: readonly string[]): { chainId: string; label: string; health: { loop: boolean; lastError: string | undefined } } | undefined;
}

/**
 * Checks the omnigate Via tokens of an incoming request: a loop error to answer with, or
 * undefined. A token of ours marks the upstream it was sent to as a loop (out of rotation, not
 * probed again) and logs it, once.
 */
export function loopError(tokens: readonly string[], registry: LoopTargets, logger: Logger): GatewayError | undefined {
  const upstream = registry.loopThrough(tokens);
  if (upstream) {
    if (!upstream.health.loop) {
      upstream.health.loop = true;
      upstream.health.lastError = loopReason;
      logger.error({ chain: upstream.chainId, upstream: upstream.label }, `${loopReason}: out of rotation`);
    }
    return new LoopDetectedError(`Request loop: this upstream is the gateway itself (${upstream.label}, chain ${upstream.chainId})`, { id: null });
  }
  if (tokens.length > maxHops) {
    return new LoopDetectedError(`Request loop: more than ${maxHops} omnigate gateways on the way (Via)`, { id: null });
  }
  return undefined;
}
