/**
 * The request's URL as the pipeline reads it: its path (`req.url` without the query), and where a
 * host app mounted a handler (connect and express strip the mount path from `req.url` and keep
 * the whole path in `req.originalUrl`; the difference is the prefix). A request target in
 * absolute form (`POST http://host/rpc/1 HTTP/1.1`, as a client behind a forward proxy writes it;
 * RFC 9112 3.2.2: a server must accept it) is read by its path and query, as the origin form.
 */
import type { IncomingMessage } from 'node:http';

/** `scheme://authority` at the start of an absolute-form target. */
const absolutePrefix = /^[a-z][a-z\d+.-]*:\/\/[^/?#]*/i;

/**
 * The target in origin form: an absolute-form `url` without its scheme and authority (`/` when
 * it has no path); any other `url` as it is. (A path starts with `/`: one byte read per request.)
 */
export function originForm(url: string): string {
  if (url.charCodeAt(0) === 47) return url;
  const m = absolutePrefix.exec(url);
  if (m === null) return url;
  const rest = url.slice(m[0].length);
  return rest.charCodeAt(0) === 47 ? rest : `/${rest}`;
}

/**
 * The host (`host:port`, without any user-info) of an absolute-form target; undefined for any
 * other target.
 */
export function targetHost(url: string): string | undefined {
  if (url.charCodeAt(0) === 47) return undefined;
  const m = absolutePrefix.exec(url);
  if (m === null) return undefined;
  const authority = m[0].slice(m[0].indexOf('//') + 2);
  return authority.slice(authority.lastIndexOf('@') + 1);
}

/** The path prefix the host app mounted us under ('' at the root), from connect/express's originalUrl. */
export function mountPrefix(req: IncomingMessage): string {
  const url = originForm(req.url ?? '/');
  const original = originForm((req as IncomingMessage & { originalUrl?: string }).originalUrl ?? url);
  const path = url.split('?')[0] ?? '';
  const originalPath = original.split('?')[0] ?? '';
  const prefix = path === '/' && !originalPath.endsWith('/')
    ? originalPath
    : originalPath.endsWith(path) ? originalPath.slice(0, originalPath.length - path.length) : '';
  // It is written into HTML, a script string, a Link header and URLs: accept plain path characters only.
  return /^[\w\-./~%]*$/.test(prefix) ? prefix : '';
}

/** The request's path and its query string (without the `?`). */
export function splitUrl(req: IncomingMessage): { path: string; search: string } {
  const url = originForm(req.url ?? '/');
  const q = url.indexOf('?');
  return q === -1 ? { path: url, search: '' } : { path: url.slice(0, q), search: url.slice(q + 1) };
}

/** The request's path: `req.url` without its query string. */
export function pathOf(req: IncomingMessage): string {
  const url = originForm(req.url ?? '/');
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}
