/**
 * The contract between the fetch stage and an upstream connection. Two implementations:
 * http-transport.ts (undici keep-alive pool) and ws-transport.ts (one multiplexed socket).
 */
import type { RpcPayload } from '../jsonrpc/types.js';

export interface UpstreamRequest {
  payload: RpcPayload;
  requestId: string;
  /** Aborted when the answer is decided elsewhere, the client leaves or the deadline passes. */
  signal: AbortSignal;
  /** Per-attempt timeout. */
  timeoutMs: number;
  /** Largest response accepted, in bytes. */
  maxBytes: number;
}

export interface UpstreamResponse {
  /** The body as the upstream sent it (ws: the message with the client's ids put back). */
  body: Buffer;
}

export interface Transport {
  send(request: UpstreamRequest): Promise<UpstreamResponse>;
  close(): Promise<void>;
}

/** Why one upstream call failed; `kind` is stable, `message` is for humans (no URLs in it). */
export class UpstreamCallError extends Error {
  readonly kind: 'timeout' | 'aborted' | 'http-status' | 'transport' | 'too-large' | 'closed';
  constructor(kind: UpstreamCallError['kind'], message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UpstreamCallError';
    this.kind = kind;
  }
}

/**
 * Runs `fn` with a signal that fires on the caller's abort or after `timeoutMs`, and says which.
 * The timer is always cleared.
 */
export async function withTimeout<T>(
  outer: AbortSignal,
  timeoutMs: number,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  let timedOut = false;
  const onAbort = () => controller.abort(outer.reason);
  if (outer.aborted) controller.abort(outer.reason);
  else outer.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new UpstreamCallError('timeout', `no answer within ${timeoutMs} ms`));
  }, timeoutMs);
  try {
    return await fn(controller.signal);
  } catch (err) {
    if (timedOut) throw new UpstreamCallError('timeout', `no answer within ${timeoutMs} ms`);
    if (outer.aborted) throw new UpstreamCallError('aborted', 'call aborted');
    throw err instanceof UpstreamCallError ? err : new UpstreamCallError('transport', describeError(err), { cause: err });
  } finally {
    clearTimeout(timer);
    outer.removeEventListener('abort', onAbort);
  }
}

/** A one-line description of a network error, without the URL (undici puts hosts in some). */
export function describeError(err: unknown): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e?.code ?? e?.cause?.code;
  const message = e?.cause?.message ?? e?.message ?? String(err);
  return code ? `${code}: ${message}` : message;
}
