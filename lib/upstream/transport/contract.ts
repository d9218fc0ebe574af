/**
 * The contract between the fetch stage and an upstream connection. Three implementations:
 * lib/upstream/transport/http.ts (node:http with a keep-alive Agent per upstream),
 * lib/upstream/transport/undici.ts (an undici Pool per upstream) and lib/upstream/transport/ws.ts
 * (one multiplexed socket).
 */
import type { RpcPayload } from '../../jsonrpc/types.js';
import type { BudgetAccount } from '../budget.js';

/**
 * The part of AbortSignal a transport uses. An AbortSignal is one; the fan-out passes a
 * Cancellation instead, because creating a Node AbortSignal per call was a measurable share of a
 * request's CPU (`BENCH_PROFILE=n1 npm run bench`).
 */
export interface CancelSignal {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/** A one-shot cancel signal: abort() runs every listener once, in order. */
export class Cancellation implements CancelSignal {
  aborted = false;
  reason: unknown = undefined;
  private listeners: (() => void)[] = [];

  addEventListener(_type: 'abort', listener: () => void): void {
    if (!this.aborted) this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const i = this.listeners.indexOf(listener);
    if (i !== -1) this.listeners.splice(i, 1);
  }

  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = [];
    for (const listener of listeners) listener();
  }
}

export interface UpstreamRequest {
  payload: RpcPayload;
  requestId: string;
  /** Aborted when the answer is decided elsewhere, the client leaves or the deadline passes. */
  signal: CancelSignal;
  /** Per-attempt timeout. */
  timeoutMs: number;
  /** Largest response accepted, in bytes. */
  maxBytes: number;
  /** The omnigate Via entries of the request being served (loop.ts), passed along. */
  via?: string;
  /** Deepest JSON nesting accepted in the answer (default `defaultMaxDepth`). */
  maxDepth?: number;
  /**
   * Answers of a declared length of this many bytes or more are not scanned for their nesting
   * here, nor the rest of one without a declared length once it reaches it: the caller checks
   * every answer this long before anything parses it (lib/verify/calls.ts, which has large
   * answers judged in a thread that checks the depth first, and skips the check of bytes equal to
   * an answer already checked). None: every answer is scanned as it is read (HTTP clients; the
   * WebSocket transport and batch coalescing always scan).
   */
  depthFrom?: number;
  /** The request's share of the global budget of buffered answer bytes (none: not counted). */
  budget?: BudgetAccount;
  /**
   * A health call (probe, head poll), not traffic: on an upstream that carried no traffic since
   * the previous health call, its HTTP socket is closed after the answer instead of kept alive.
   */
  background?: boolean;
  /**
   * A health call that another follows at once on the same connection (the probe's chain id, then
   * its timed head): its socket is left open for it, whatever the traffic (the last one decides).
   */
  keepOpen?: boolean;
}

/** Nesting depth accepted when a request names none (`limits.jsonDepth`'s default). */
export const defaultMaxDepth = 256;

/** The failure of a call whose answer nests deeper than `limit`. */
export const tooDeep = (limit: number) => new UpstreamCallError('too-deep', `answer nested deeper than ${limit} levels (limits.jsonDepth)`);

/** The failure of a call whose answer would not fit the byte budget (`sent`: false when refused before the call). */
export const overBudget = (account: BudgetAccount, bytes: number, sent = true) =>
  new UpstreamCallError(
    'budget',
    `upstream byte budget exhausted: ${bytes} more bytes would pass limits.bufferedBytes (${account.limit}; ${account.budget.used} in use)`,
    { sent },
  );

export interface UpstreamResponse {
  /** The body as the upstream sent it (ws: the message with the client's ids put back). */
  body: Buffer;
}

/**
 * Who hears how a call ended when it is made with `Transport.call`: exactly one of the two, once;
 * a call refused or failed at once is told before `call` returns.
 */
export interface CallSink<R = UpstreamResponse> {
  answered(response: R): void;
  failed(err: Error): void;
}

export interface Transport {
  send(request: UpstreamRequest): Promise<UpstreamResponse>;
  /**
   * The same call as `send`, its end told to `sink` with no promise and no closure per call (the
   * agreement loop's reads, the hot path, use it when a transport has it). Optional: a transport
   * without it (ws, a test's fake) is called through `send`.
   */
  call?(request: UpstreamRequest, sink: CallSink): void;
  /**
   * The call a `keepOpen` health call left its connection to will not come (the probe stopped at
   * its first answer: a wrong chain id, an error): decided now as that call would have, so an
   * upstream that carried no traffic since the last health call has its connections closed once
   * no call is in flight. Optional: a transport without it never keeps a connection for a call.
   */
  releaseKept?(): void;
  close(): Promise<void>;
}

/** Why one upstream call failed; `kind` is stable, `message` is for humans (no URLs in it). */
export class UpstreamCallError extends Error {
  /** `rate-limited`: HTTP 429, or 503 with a Retry-After (the provider's quota; lib/health/rate-limits.ts). */
  readonly kind: 'timeout' | 'aborted' | 'http-status' | 'rate-limited' | 'transport' | 'too-large' | 'too-deep' | 'budget' | 'closed';
  /**
   * Whether the request's bytes may have reached the upstream: false only when the call never
   * wrote to a connection (refused before the call, connection refused, DNS, TLS handshake or
   * proxy failure, aborted while waiting for a socket); true otherwise, the upstream may have
   * acted on it (a write must not be sent elsewhere as if it had not).
   */
  readonly sent: boolean;
  /** A rate limit's Retry-After, ms from when it came; undefined when none was given (or readable). */
  readonly retryAfterMs: number | undefined;
  constructor(kind: UpstreamCallError['kind'], message: string, options?: { cause?: unknown; sent?: boolean; retryAfterMs?: number | undefined }) {
    super(message, options);
    this.name = 'UpstreamCallError';
    this.kind = kind;
    this.sent = options?.sent ?? true;
    this.retryAfterMs = options?.retryAfterMs;
  }
}

/**
 * The failure of an HTTP answer that is not 2xx: a rate limit (429, or 503 with a Retry-After)
 * with its Retry-After, else `http-status`. The message is the status alone.
 */
export function statusError(status: number, retryAfter: string | undefined, now = Date.now()): UpstreamCallError {
  if (status === 429 || (status === 503 && retryAfter !== undefined)) {
    return new UpstreamCallError('rate-limited', `HTTP ${status}`, { retryAfterMs: retryAfterMsOf(retryAfter, now) });
  }
  return new UpstreamCallError('http-status', `HTTP ${status}`);
}

/** A Retry-After header (delay-seconds, or an HTTP date) → ms from `now`; undefined when absent or unreadable. */
export function retryAfterMsOf(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

/**
 * Runs `fn` with a signal that fires on the caller's abort or after `timeoutMs`, and says which.
 * `fn` sets `state.sent` once it writes the request: a failure it did not describe itself says
 * whether the bytes may have left. The timer is always cleared.
 */
export async function withTimeout<T>(
  outer: CancelSignal,
  timeoutMs: number,
  fn: (signal: AbortSignal, state: { sent: boolean }) => Promise<T>,
): Promise<T> {
  const controller = new AbortController();
  const state = { sent: false };
  let timedOut = false;
  const onAbort = () => controller.abort(outer.reason);
  if (outer.aborted) controller.abort(outer.reason);
  else outer.addEventListener('abort', onAbort, { once: true });
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new UpstreamCallError('timeout', `no answer within ${timeoutMs} ms`, { sent: state.sent }));
  }, timeoutMs);
  try {
    return await fn(controller.signal, state);
  } catch (err) {
    if (timedOut) throw new UpstreamCallError('timeout', `no answer within ${timeoutMs} ms`, { sent: state.sent });
    if (outer.aborted) throw new UpstreamCallError('aborted', 'call aborted', { sent: state.sent });
    throw err instanceof UpstreamCallError ? err : new UpstreamCallError('transport', describeError(err), { cause: err, sent: state.sent });
  } finally {
    clearTimeout(timer);
    outer.removeEventListener('abort', onAbort);
  }
}

/** A one-line description of a network error: its code and message (an address at most, never the URL). */
export function describeError(err: unknown): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e?.code ?? e?.cause?.code;
  const message = e?.cause?.message ?? e?.message ?? String(err);
  return code ? `${code}: ${message}` : message;
}
