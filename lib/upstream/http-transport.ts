/**
 * HTTP(S) upstream: a keep-alive undici Pool per upstream. The client's body is POSTed as is
 * (so the upstream echoes the client's ids), with the request id in `X-Request-Id`.
 * HTTP ≥ 300 (redirects are not followed), a body over the size limit, a timeout or a transport
 * error each fail the call with an UpstreamCallError.
 *
 * Calls go through undici's handler interface (`pool.dispatch`) rather than `pool.request`: the
 * body is collected straight from the parser's callbacks, with no Readable stream, async
 * iterator or second AbortController per call. On the N=1 path that halves the client's share
 * of the CPU (measured with `BENCH_PROFILE=n1 npm run bench`).
 */
import { Pool, type Dispatcher } from 'undici';
import { describeError, UpstreamCallError, type Transport, type UpstreamRequest, type UpstreamResponse } from './transport.js';

export interface HttpTransportOptions {
  /** Keep-alive connections kept per upstream. */
  connections?: number;
}

export function createHttpTransport(rawUrl: string, options: HttpTransportOptions = {}): Transport {
  const url = new URL(rawUrl);
  const path = `${url.pathname}${url.search}`;
  const baseHeaders: string[] = ['content-type', 'application/json', 'accept', 'application/json'];
  if (url.username || url.password) {
    const user = decodeURIComponent(url.username);
    const pass = decodeURIComponent(url.password);
    baseHeaders.push('authorization', `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`);
  }
  const pool = new Pool(url.origin, {
    connections: options.connections ?? 128,
    keepAliveTimeout: 30_000,
    // Our own timer bounds each call; these only stop undici's defaults (300 s) from mattering.
    headersTimeout: 0,
    bodyTimeout: 0,
  });

  function send(request: UpstreamRequest): Promise<UpstreamResponse> {
    const { signal, timeoutMs, maxBytes } = request;
    if (signal.aborted) return Promise.reject(new UpstreamCallError('aborted', 'call aborted'));
    return new Promise<UpstreamResponse>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let settled = false;
      /** Why we stopped the call ourselves (timeout, caller's abort, status, size). */
      let failure: UpstreamCallError | undefined;
      /** undici's abort for this call; known once the call is written to a connection. */
      let abortCall: ((reason: Error) => void) | undefined;

      const settle = (err: Error | undefined, body?: Buffer) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        if (err) reject(err);
        else resolve({ body: body! });
      };
      /** Stops the call: at once for our caller, and on the wire as soon as undici lets us. */
      const stop = (err: UpstreamCallError) => {
        failure ??= err;
        settle(failure);
        abortCall?.(failure);
      };
      const onAbort = () => stop(new UpstreamCallError('aborted', 'call aborted'));
      const timer = setTimeout(() => stop(new UpstreamCallError('timeout', `no answer within ${timeoutMs} ms`)), timeoutMs);
      signal.addEventListener('abort', onAbort, { once: true });

      const handler: Dispatcher.DispatchHandler = {
        onConnect(abort) {
          if (failure) abort(failure);
          else abortCall = abort;
        },
        onHeaders(statusCode, rawHeaders) {
          if (statusCode >= 300) {
            stop(new UpstreamCallError('http-status', `HTTP ${statusCode}`));
            return false;
          }
          const declared = contentLength(rawHeaders);
          if (declared > maxBytes) {
            stop(new UpstreamCallError('too-large', `response of ${declared} bytes is over the ${maxBytes}-byte limit`));
            return false;
          }
          return true;
        },
        onData(chunk) {
          size += chunk.length;
          if (size > maxBytes) {
            stop(new UpstreamCallError('too-large', `response over the ${maxBytes}-byte limit`));
            return false;
          }
          chunks.push(chunk);
          return true;
        },
        onComplete() {
          settle(undefined, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
        },
        onError(err) {
          settle(failure ?? new UpstreamCallError('transport', describeError(err), { cause: err }));
        },
      };
      pool.dispatch(
        { origin: url.origin, path, method: 'POST', headers: [...baseHeaders, 'x-request-id', request.requestId], body: request.payload.raw },
        handler,
      );
    });
  }

  return {
    send,
    close: () => pool.close().catch(() => pool.destroy()),
  };
}

/** The Content-Length of raw undici headers (name, value, name, value…), NaN when absent. */
function contentLength(raw: Buffer[] | string[] | null): number {
  if (!raw) return NaN;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 14 && name.toString().toLowerCase() === 'content-length') return Number(raw[i + 1]!.toString());
  }
  return NaN;
}
