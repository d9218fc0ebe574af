/**
 * What a call to an HTTP(S) upstream is on either client (node:http, http-call.ts; undici,
 * undici.ts), written once: its place in its client's list of calls in flight and in its
 * admission queue, its deadline (an entry of the shared list of its duration, ../deadlines.ts) and abort, the reading of its answer into one buffer
 * against the size limit, the byte budget and the nesting limit (scanned a chunk at a time as the
 * bytes arrive, so a large answer's scan never runs whole on the event loop; not scanned when
 * its length, declared or read so far, reaches the request's `depthFrom`: its caller checks it;
 * one without a declared length, kept as its chunks, joined at its end, a slice per turn of the
 * event loop when it is long), its ending (one settlement,
 * budget bytes given back on failure), and the failure a network error maps to. Each client's
 * Call adds how its request is made and dropped (`drop`) and what its client does when a call
 * ends (`ended`). Also the request's parts both clients send alike: the refusal of a call before
 * it starts, the request id header, Basic authorization from the URL.
 */
import { deeperAfter } from '../../jsonrpc/scan.js';
import { DeadlineList, deadlineList, type Due } from '../deadlines.js';
import { defaultMaxDepth, describeError, overBudget, statusError, tooDeep, UpstreamCallError, type CallSink, type UpstreamRequest, type UpstreamResponse } from './contract.js';

/** Error bodies up to this size are read and dropped so the connection is kept. */
export const drainLimit = 64 * 1024;
/** Answers of a declared length above this are read into one buffer allocated up front. */
const preallocFrom = 64 * 1024;
/**
 * An answer without a declared length, kept as the chunks read, is joined into one buffer at its
 * end: from this length on a slice per turn of the event loop (`joinSlice` bytes), so that joining
 * tens of megabytes never holds the loop in one copy.
 */
const joinSlicedFrom = 8 * 1024 * 1024;
const joinSlice = 4 * 1024 * 1024;
const noBytes = Buffer.alloc(0);
/** `nestMode` (scan.ts NestingState) of an answer found deeper than the limit, and of one whose nesting the caller checks (request.depthFrom). */
const deeper = -1;
const leftToCaller = -2;

/** What a call needs of the client that made it. */
export interface CallOwner {
  /** The first of the calls in flight (a list linked through the calls; close() fails them). */
  live: UpstreamCall | undefined;
  /** Starts the call now, or queues it until the client has room (admission.ts). */
  admit(call: UpstreamCall): void;
  /** The call leaves the queue without having started. */
  unqueue(call: UpstreamCall): void;
  /** A started call ended: its room is free for the next in the queue. */
  release(call: UpstreamCall): void;
  /** Calls other than health calls (`request.background`) made, and that count at the last health call's end. */
  traffic: number;
  trafficSeen: number;
}

/**
 * Whether the client carried no traffic since its last health call ended, at the end of another
 * (or when the call a keepOpen one left its connection to will not come): its connections may go.
 */
export function quietSinceHealthCall(owner: Pick<CallOwner, 'traffic' | 'trafficSeen'>): boolean {
  const quiet = owner.traffic === owner.trafficSeen;
  owner.trafficSeen = owner.traffic;
  return quiet;
}

/** A promise's settlement as a call's sink (Transport.send): one object of one shape. */
export function promiseSink(resolve: (response: UpstreamResponse) => void, reject: (err: Error) => void): CallSink {
  return { answered: resolve, failed: reject };
}

/** The failure of a call refused before it starts (aborted already, client closed, budget spent); none: it may start. */
export function refusal(request: UpstreamRequest, closed: boolean): UpstreamCallError | undefined {
  if (request.signal.aborted) return new UpstreamCallError('aborted', 'call aborted', { sent: false });
  if (closed) return new UpstreamCallError('closed', 'transport closed', { sent: false });
  if (request.budget?.budget.exhausted) return overBudget(request.budget, 1, false);
  return undefined;
}

/** The request id as a header value: the parse stage only lets visible ASCII through; anything else would be refused. */
export function requestIdHeader(id: string): string {
  // A loop over the char codes: the usual id (visible ASCII already) is checked without a regex run.
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) return id.replace(/[^\x21-\x7e]/g, '');
  }
  return id;
}

/**
 * Whether the URL's user-info percent-decodes (basicAuth decodes it; a `%` that starts no escape
 * would throw there): the config refuses an upstream or proxy URL for which it does not.
 */
export function userInfoDecodes(url: URL): boolean {
  try {
    decodeURIComponent(url.username);
    decodeURIComponent(url.password);
    return true;
  } catch {
    return false;
  }
}

/** The Authorization header of the URL's user-info, if any. */
export function basicAuth(url: URL): string | undefined {
  if (!url.username && !url.password) return undefined;
  return `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`;
}

/** An answer whose body is not as long as its Content-Length says (undici's check, and ours: UpstreamCall.complete). */
function bodyNotDeclared(cause?: Error): UpstreamCallError {
  const code = (cause as { code?: string } | undefined)?.code;
  return new UpstreamCallError('transport', `invalid HTTP response: the body's length is not its Content-Length${code ? ` (${code})` : ''}`, { cause, sent: true });
}

const tunnelRefused = /^Proxy response \((\d+)\) !== 200/;
const parserReason = /^Response does not match the HTTP\/1\.1 protocol \((.*)\)$/;

/**
 * A network error as a failed call, in the same words on both clients: an answer the HTTP parser
 * refused (`invalid HTTP response: <llhttp's reason>`, with its code: node's `HPE_…`, undici's
 * when it gives one), a connection closed before the answer was complete, a refused tunnel;
 * anything else by its code and message (never a URL).
 */
export function transportError(err: Error, sent: boolean): UpstreamCallError {
  const { code, reason } = err as Error & { code?: string; reason?: string };
  if (err.name === 'HTTPParserError') {
    // (undici's; its message wraps llhttp's reason.)
    const why = parserReason.exec(err.message)?.[1] ?? err.message;
    return new UpstreamCallError('transport', `invalid HTTP response: ${why}${code ? ` (${code})` : ''}`, { cause: err, sent: true });
  }
  if (code?.startsWith('HPE_')) return new UpstreamCallError('transport', `invalid HTTP response: ${reason ?? err.message} (${code})`, { cause: err, sent: true });
  if (code === 'UND_ERR_HEADERS_OVERFLOW') return new UpstreamCallError('transport', `invalid HTTP response: Header overflow (${code})`, { cause: err, sent: true });
  if (code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH') return bodyNotDeclared(err);
  const refused = tunnelRefused.exec(err.message);
  if (refused) return new UpstreamCallError('transport', `the proxy refused the tunnel: HTTP ${refused[1]}`, { cause: err, sent: false });
  if (sent && code === 'UND_ERR_SOCKET' && err.message === 'other side closed') {
    return new UpstreamCallError('transport', 'connection closed before the answer was complete', { cause: err, sent: true });
  }
  return new UpstreamCallError('transport', describeError(err), { cause: err, sent });
}

function onTimeout(call: UpstreamCall): void {
  call.fail(new UpstreamCallError('timeout', `no answer within ${call.request.timeoutMs} ms`, { sent: call.sent }));
}

/**
 * One upstream call, whichever client carries it. A subclass's constructor ends with
 * `client.admit(this)` (here its own fields would not be set yet when admission starts it).
 */
export abstract class UpstreamCall implements Due {
  /** Whether the request's bytes may have reached the upstream (UpstreamCallError.sent). */
  sent = false;
  protected settled = false;
  /** Its timeout, in the process's list of deadlines of its duration (deadlines.ts). */
  dueAt = 0;
  duePrev: Due | undefined = undefined;
  dueNext: Due | undefined = undefined;
  dueList: DeadlineList | undefined = undefined;
  /** The answer's bytes when its length was declared large (filled as they come). */
  private body: Buffer | undefined = undefined;
  private chunks: Buffer[] = [];
  private size = 0;
  /** While a long answer's chunks are joined a slice per turn: the next chunk to copy (-1: not joining). */
  private joinAt = -1;
  private joinedBytes = 0;
  /** Bytes charged to the request's budget account for this answer. */
  private charged = 0;
  /** The nesting scan of the answer's bytes so far (scan.ts `NestingState`; -1: deeper than the limit; -2: not scanned, the caller checks it). */
  nestDepth = 0;
  nestMode = 0;
  /** The answer's declared length (-1: none). */
  protected declared = -1;
  /** Neighbours in the client's list of calls in flight. */
  prev: UpstreamCall | undefined = undefined;
  next: UpstreamCall | undefined = undefined;
  /** Whether it was admitted (counted in the client's `active`). */
  protected started = false;
  /** Whether it was admitted above its upstream's share of the socket cap, on lent room (admission.ts). */
  borrowed = false;
  /** Whether it waits in the client's queue, and its neighbours there. */
  waiting = false;
  qprev: this | undefined = undefined;
  qnext: this | undefined = undefined;

  constructor(
    readonly client: CallOwner,
    readonly request: UpstreamRequest,
    /** Told how the call ended: the caller's sink (Transport.call), or a promise's (`promiseSink`). */
    private readonly sink: CallSink,
  ) {
    this.next = client.live;
    if (client.live) client.live.prev = this;
    client.live = this;
    deadlineList(request.timeoutMs).add(this);
    request.signal.addEventListener('abort', this.onAbort, { once: true });
    if (request.background !== true) client.traffic += 1;
  }

  /** Its timeout passed. */
  expire(): void {
    onTimeout(this);
  }

  /** The client admitted it: it sends its request. */
  abstract start(): void;
  /** Drops the request and its connection (our side ended the call, or its error answer is not drained). */
  protected abstract drop(err?: UpstreamCallError): void;
  /** What the client does when the call ends, before the next call is admitted (the socket cap's part). */
  protected abstract ended(): void;

  private readonly onAbort = () => this.fail(new UpstreamCallError('aborted', 'call aborted', { sent: this.sent }));

  /**
   * The answer's head, `declared` set: true when its body is to be read. A status other than
   * 2xx ends the call (its body is read and dropped to keep the connection when it is small and
   * of known length, `drains`; else the connection is dropped), so does a declared length over
   * the size limit or the budget; a large declared length is allocated up front (no second copy
   * in a concat at the end).
   */
  protected head(status: number, retryAfter?: string): boolean {
    if (status >= 300 || status < 200) {
      // A 429 (or a 503 with Retry-After) is a rate limit, with the provider's wait (contract.ts).
      this.finish(statusError(status, retryAfter));
      if (!this.drains) this.drop();
      return false;
    }
    const { maxBytes, budget } = this.request;
    if (this.declared > maxBytes) {
      this.fail(new UpstreamCallError('too-large', `response of ${this.declared} bytes is over the ${maxBytes}-byte limit`));
      return false;
    }
    if (this.declared > 0) {
      if (budget && !this.charge(this.declared)) return false;
      if (this.declared > preallocFrom) this.body = Buffer.allocUnsafe(this.declared);
    }
    // (The caller checks the nesting of an answer this long: request.depthFrom.)
    if (this.declared >= (this.request.depthFrom ?? Infinity)) this.nestMode = leftToCaller;
    return true;
  }

  /** Whether an error answer's body is read and dropped (small, of known length) rather than its connection dropped. */
  protected get drains(): boolean {
    return this.declared >= 0 && this.declared <= drainLimit;
  }

  /** A chunk of the answer's body. */
  protected take(chunk: Buffer): void {
    if (this.settled) return;
    this.size += chunk.length;
    if (this.size > this.request.maxBytes || (this.declared >= 0 && this.size > this.declared)) {
      this.fail(new UpstreamCallError('too-large', `response over the ${this.request.maxBytes}-byte limit`));
    } else if (this.body) {
      chunk.copy(this.body, this.size - chunk.length);
      this.scan(chunk);
    } else if (this.declared > 0 || !this.request.budget || this.charge(chunk.length)) {
      this.chunks.push(chunk);
      this.scan(chunk);
    }
  }

  /**
   * Feeds a chunk to the nesting scan (an answer found too deep is still read whole: its
   * connection is kept). An answer without a declared length that reaches the request's
   * `depthFrom` is left to the caller from there on, as one declared that long is (head): the
   * caller scans every answer of that length whole, so the scan here would be done twice.
   */
  private scan(chunk: Buffer): void {
    if (this.nestMode < 0) return;
    if (this.size >= (this.request.depthFrom ?? Infinity)) this.nestMode = leftToCaller;
    else deeperAfter(this, chunk, this.request.maxDepth ?? defaultMaxDepth);
  }

  /**
   * The answer is complete: its bytes are the call's result, unless they nest too deep. A long
   * one read as chunks is joined a slice per turn first (`joinSlicedFrom`); its call may still
   * end meanwhile on its timeout or abort, its connection kept (the answer was read whole).
   */
  protected complete(): void {
    if (this.settled) return;
    // Fewer bytes than declared, yet complete for the HTTP parser (node:http's 204 or 304 with a
    // Content-Length: no body follows): the buffer allocated up front for the declared length is
    // not filled, and what it holds is memory of this process (other requests' answers and
    // headers), never an answer.
    if (this.declared >= 0 && this.size !== this.declared) return this.fail(bodyNotDeclared());
    const chunks = this.chunks;
    if (this.body === undefined && chunks.length > 1 && this.size >= joinSlicedFrom) {
      this.body = Buffer.allocUnsafe(this.size);
      this.joinAt = 0;
      joinSome(this);
      return;
    }
    this.completed(this.body ?? (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.size)));
  }

  /** Copies the next slice of the chunks into the body; true when the body is whole (or the call ended meanwhile). */
  joinNext(): boolean {
    if (this.settled) return true;
    const { chunks, body } = this;
    let copied = 0;
    let i = this.joinAt;
    for (; i < chunks.length && copied < joinSlice; i++) {
      const chunk = chunks[i]!;
      chunk.copy(body!, this.joinedBytes);
      this.joinedBytes += chunk.length;
      copied += chunk.length;
      chunks[i] = noBytes; // its memory may go before the rest is copied
    }
    this.joinAt = i;
    return i === chunks.length;
  }

  /** The joined answer is whole (or its call ended meanwhile). */
  joinDone(): void {
    this.chunks = [];
    this.joinAt = -1;
    if (!this.settled) this.completed(this.body!);
  }

  /** The answer's bytes, whole. */
  private completed(body: Buffer): void {
    // Refused before anything parses it: JSON.parse takes seconds on a few MB of `[[[[…]]]]`.
    const maxDepth = this.request.maxDepth ?? defaultMaxDepth;
    if (this.nestMode === deeper || maxDepth < 0) return this.finish(tooDeep(maxDepth));
    this.finish(undefined, body);
  }

  /** Charges the request's budget account; false when it failed the call for it. */
  private charge(bytes: number): boolean {
    const account = this.request.budget!;
    if (!account.take(bytes)) {
      this.fail(overBudget(account, bytes));
      return false;
    }
    this.charged += bytes;
    return true;
  }

  /**
   * Our side ends the call (timeout, abort, size, budget, close): its connection is not reused,
   * unless the answer was read whole (it is being joined): that connection is clean.
   */
  fail(err: UpstreamCallError): void {
    if (this.settled) return;
    this.finish(err);
    if (this.joinAt < 0) this.drop(err);
  }

  /** Ends the call for its caller; its connection is the subclass's to deal with. */
  protected finish(err: UpstreamCallError | undefined, body?: Buffer): void {
    if (this.settled) return;
    this.settled = true;
    DeadlineList.remove(this);
    this.request.signal.removeEventListener('abort', this.onAbort);
    const { prev, next, client } = this;
    if (prev) prev.next = next;
    else client.live = next;
    if (next) next.prev = prev;
    this.prev = this.next = undefined;
    this.ended();
    if (this.waiting) client.unqueue(this);
    else if (this.started) client.release(this);
    if (err) {
      // A failed call's bytes are dropped: they go back to the budget.
      if (this.charged > 0) this.request.budget?.give(this.charged);
      this.sink.failed(err);
    } else {
      this.sink.answered({ body: body! });
    }
  }
}

/** One turn's slice of a long answer's join (complete), then the next turn's, until it is whole or its call ended. */
function joinSome(call: UpstreamCall): void {
  if (call.joinNext()) call.joinDone();
  else setImmediate(joinSome, call);
}
