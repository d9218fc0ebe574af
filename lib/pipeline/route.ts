/**
 * The balancer's RPC routes: `/rpc/<chainId>` and `/confirmations/<n>/rpc/<chainId>`, and the
 * finalized route `/finalized/rpc/<chainId>`, `/confirmations/<n>/finalized/rpc/<chainId>`
 * (a trailing slash is accepted), each optionally followed by a client key segment
 * (`/rpc/<chainId>/<key>`: lib/access; a client that can only set a URL). Pure: path → raw
 * route parameters, checked later by the parse stage so the error can carry the client's id.
 */
import type { IncomingMessage } from 'node:http';
import { keepSegment } from '../upstream/redact.js';
import { pathOf } from './url.js';

export interface RpcRoute {
  chainId: string;
  /** The `<n>` segment as written, when the path has one. */
  confirmations?: string;
  /** The finalized route (lib/verify/finalized-route.ts). */
  finalized?: true;
  /** The client key written as the path's last segment (lib/access); never shown (shownPath). */
  key?: string;
}

const rpcPath = /^\/(?:confirmations\/([^/]*)\/)?(finalized\/)?rpc\/([^/]*)(?:\/([^/]+))?\/?$/;

export function matchRpcRoute(pathname: string): RpcRoute | undefined {
  const m = rpcPath.exec(pathname);
  if (!m) return undefined;
  const route: RpcRoute = { chainId: safeDecode(m[3]!) };
  if (m[1] !== undefined) route.confirmations = safeDecode(m[1]);
  if (m[2] !== undefined) route.finalized = true;
  if (m[4] !== undefined) route.key = safeDecode(m[4]);
  return route;
}

/**
 * The request's path as messages and logs may show it: a client key in the path (the RPC
 * route's last segment) is replaced by `***`. Any path may have a client key typed in elsewhere
 * (`/rpc/KEY`, `/rpc/1/KEY/x`, `/RPC/1/KEY`, `//rpc/1/KEY`): each of its segments that is neither
 * a word nor a short number is replaced by `***` too (as an upstream URL's path is shown,
 * redact.ts).
 */
export function shownPath(req: IncomingMessage): string {
  const path = pathOf(req);
  // (an RPC route's chain id and <n> too: a client may write its key there, `/rpc/KEY`)
  const keyed = routeOf(req)?.key === undefined ? path : path.replace(/\/[^/]+(\/?)$/, '/***$1');
  return plainSegments.test(keyed) ? keyed : keyed.split('/').map(shownSegment).join('/');
}

/**
 * A chain id or `<n>` as a message (which is logged) may quote it: as written (JSON) when it is
 * short, else only its length. A client that writes its key where the chain id goes (`/rpc/KEY`,
 * as Infura's `/v3/KEY`) must not find it in the logs, and a key is at least 16 characters.
 */
export function shownRouteValue(text: string): string {
  return text.length <= 12 ? JSON.stringify(text) : `(${text.length} characters, not shown: it may be a key, which goes after the chain id)`;
}

/**
 * A path whose every segment is a short lower-case word, a short number or empty: shown as is
 * without a split. Others are judged segment by segment (redact.ts keepSegment: `aBcDeFgH`, cases
 * mixed, is a short key, not a word).
 */
const plainSegments = /^(?:\/(?:[a-z][a-z_-]{0,11}|\d{1,12})?)*$/;

function shownSegment(segment: string): string {
  return /^\d{1,12}$/.test(segment) || segment === 'confirmations' || keepSegment(safeDecode(segment)) ? segment : '***';
}

const kRoute = Symbol('omnigate.route');
type WithRoute = IncomingMessage & { [kRoute]?: { url: string | undefined; route: RpcRoute | undefined } };

/**
 * The request's RPC route, matched once per request (the pipeline's handler asks whether the
 * request is an RPC call, the parse stage reads its chain and `<n>`): kept on the request for
 * its URL, matched again only if a host app changed `req.url` in between.
 */
export function routeOf(req: IncomingMessage): RpcRoute | undefined {
  const seen = (req as WithRoute)[kRoute];
  if (seen && seen.url === req.url) return seen.route;
  const route = matchRpcRoute(pathOf(req));
  (req as WithRoute)[kRoute] = { url: req.url, route };
  return route;
}

function safeDecode(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** A chain id is a non-negative decimal integer; returns its canonical form (no leading zeros). */
export function canonicalChainId(text: string): string | undefined {
  if (!/^\d{1,1000}$/.test(text)) return undefined;
  // Without a leading zero the digits are already canonical: no BigInt round trip per request.
  return text.length === 1 || text[0] !== '0' ? text : BigInt(text).toString();
}

/** `<n>` must be a positive decimal integer. */
export function parseConfirmations(text: string): number | undefined {
  // Any positive integer is valid here; one above the upstreams is refused later (-32003).
  if (!/^\d{1,1000}$/.test(text)) return undefined;
  const n = Number(text);
  return n >= 1 ? n : undefined;
}
