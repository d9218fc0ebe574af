/**
 * The request target's form (RFC 9112 3.2). A client behind a forward proxy, and some HTTP
 * libraries, write the target in absolute form (`POST http://host:5000/rpc/1 HTTP/1.1`), which a
 * server must accept (3.2.2): such a request is served as its path and query (`/rpc/1`), the
 * target's host taking the place of the Host header. `OPTIONS *` (asterisk form, about the server
 * itself) is answered 204 with the methods served. Any other target that is not a path (connect
 * would pass it by every route to an HTML 404) is refused with a JSON-RPC error (400).
 */
import type http from 'node:http';
import { RpcCode } from '../jsonrpc/codes.js';
import { originForm, targetHost } from '../pipeline/url.js';
import { newRequestId } from '../pipeline/request-id.js';

/** `app`, given every request with its target in origin form. */
export function originTargets(app: http.RequestListener): http.RequestListener {
  return function originTarget(req, res) {
    const url = req.url ?? '/';
    // (the usual target, a path: one byte read)
    if (url.charCodeAt(0) === 47) return app(req, res);
    const host = targetHost(url);
    if (host !== undefined) {
      req.url = originForm(url);
      // The target's host, not the Host header (3.2.2); an HTTP/1.1 request still needs a Host header (3.2).
      if (host !== '' && (req.headers.host !== undefined || req.httpVersionMinor === 0)) req.headers.host = host;
      return app(req, res);
    }
    req.resume(); // the body is not read: drained, so the client reads the answer
    if (url === '*' && req.method === 'OPTIONS') {
      res.writeHead(204, { Allow: 'GET, HEAD, POST, OPTIONS' }).end();
      return;
    }
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: RpcCode.InvalidRequest,
        message: url === '*' ? `Invalid request: the target * is for OPTIONS only` : 'Invalid request: the request target is neither a path (/rpc/1) nor an absolute URL (http://host/rpc/1)',
      },
    });
    res.writeHead(400, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'X-Request-Id': newRequestId() }).end(body);
  };
}
