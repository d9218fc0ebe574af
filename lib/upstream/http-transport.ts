/**
 * HTTP(S) upstream: a keep-alive undici Pool per upstream. The client's body is POSTed as is
 * (so the upstream echoes the client's ids), with the request id in `X-Request-Id`.
 * HTTP ≥ 300 (redirects are not followed), a body over the size limit, a timeout or a transport
 * error each fail the call with an UpstreamCallError.
 */
import { Pool } from 'undici';
import { UpstreamCallError, withTimeout, type Transport, type UpstreamRequest, type UpstreamResponse } from './transport.js';

export interface HttpTransportOptions {
  /** Keep-alive connections kept per upstream. */
  connections?: number;
}

export function createHttpTransport(rawUrl: string, options: HttpTransportOptions = {}): Transport {
  const url = new URL(rawUrl);
  const path = `${url.pathname}${url.search}`;
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (url.username || url.password) {
    const user = decodeURIComponent(url.username);
    const pass = decodeURIComponent(url.password);
    headers.authorization = `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
  }
  const pool = new Pool(url.origin, {
    connections: options.connections ?? 128,
    keepAliveTimeout: 30_000,
    // Our own timer (withTimeout) bounds each call; these only stop undici's defaults (300 s) from mattering.
    headersTimeout: 0,
    bodyTimeout: 0,
  });

  async function send(request: UpstreamRequest): Promise<UpstreamResponse> {
    return withTimeout(request.signal, request.timeoutMs, async (signal) => {
      const response = await pool.request({
        path,
        method: 'POST',
        headers: { ...headers, 'x-request-id': request.requestId },
        body: request.payload.raw,
        signal,
      });
      // Destroying an unfinished undici body emits an AbortError; it is expected here, not a crash.
      response.body.on('error', () => {});
      if (response.statusCode >= 300) {
        response.body.destroy();
        throw new UpstreamCallError('http-status', `HTTP ${response.statusCode}`);
      }
      const declared = Number(response.headers['content-length']);
      if (declared > request.maxBytes) {
        response.body.destroy();
        throw new UpstreamCallError('too-large', `response of ${declared} bytes is over the ${request.maxBytes}-byte limit`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body) {
        size += (chunk as Buffer).length;
        if (size > request.maxBytes) {
          response.body.destroy();
          throw new UpstreamCallError('too-large', `response over the ${request.maxBytes}-byte limit`);
        }
        chunks.push(chunk as Buffer);
      }
      return { body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) };
    });
  }

  return {
    send,
    close: () => pool.close().catch(() => pool.destroy()),
  };
}
