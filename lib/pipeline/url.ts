/**
 * The request's URL as the pipeline reads it: its path (`req.url` without the query), and where a
 * host app mounted a handler (connect and express strip the mount path from `req.url` and keep
 * the whole path in `req.originalUrl`; the difference is the prefix).
 */
import type { IncomingMessage } from 'node:http';

/** The path prefix the host app mounted us under ('' at the root), from connect/express's originalUrl. */
export function mountPrefix(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const original = (req as IncomingMessage & { originalUrl?: string }).originalUrl ?? url;
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
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return q === -1 ? { path: url, search: '' } : { path: url.slice(0, q), search: url.slice(q + 1) };
}

/** The request's path: `req.url` without its query string. */
export function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q);
}
