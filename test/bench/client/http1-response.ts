/**
 * An HTTP/1.1 response parser for the upstream connections of lib/upstream/transport/http.ts: push() the
 * bytes as they come, and the sink hears the head, the body in pieces and the end of the
 * message. One response per parser run; reset() readies it for the next one on the same
 * connection.
 *
 * Strict where leniency lets one message be read as another (RFC 9112 §6.3, §11.2): a header
 * line must be `name: value` with a token name and CRLF endings, Content-Length must be digits
 * and agree with itself, Transfer-Encoding must be exactly `chunked`. Anything else throws an
 * Http1ParseError and the connection must be dropped.
 */

export interface ResponseHead {
  status: number;
  /** The connection may carry another request after this response. */
  keepAlive: boolean;
  /** The declared body length; -1 for chunked or read-until-close bodies. */
  contentLength: number;
  /** The server's `Keep-Alive: timeout=N` hint, in ms (0 when none). */
  keepAliveMs: number;
}

export interface ResponseSink {
  /** The final head (1xx interim responses are skipped). */
  onHead(head: ResponseHead): void;
  /** A piece of the (de-chunked) body: a view into the pushed bytes, which may be kept. */
  onBody(chunk: Buffer): void;
  /** The message is complete. `extra`: bytes that followed it in the same push, if any. */
  onComplete(extra: Buffer | undefined): void;
}

export class Http1ParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'Http1ParseError';
  }
}

/** Largest response head accepted (status line and headers). */
export const maxHeadBytes = 16 * 1024;
/** Largest chunk-size line or trailer line accepted. */
const maxLineBytes = 4 * 1024;
const CRLF = Buffer.from('\r\n');
const HEAD_END = Buffer.from('\r\n\r\n');
/** The characters of a header name (RFC 9110 token), by char code. */
const tokenChars = new Uint8Array(128);
for (const c of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") tokenChars[c.charCodeAt(0)] = 1;
const digits = /^\d{1,15}$/;
const chunkSize = /^([0-9A-Fa-f]{1,12})[ \t]*(?:;[^\r\n]*)?$/;

const enum State {
  Head,
  Length,
  ChunkSize,
  ChunkData,
  ChunkDataEnd,
  Trailers,
  UntilClose,
  Done,
}

export class Http1ResponseParser {
  private state = State.Head;
  /** Bytes of an unfinished head or line, kept until the rest comes. */
  private pending: Buffer | undefined;
  /** Body bytes still to come (Length, ChunkData). */
  private remaining = 0;
  /** A byte of a response came since the last reset() (an interim 1xx head counts). */
  private started = false;

  constructor(private readonly sink: ResponseSink) {}

  /** Ready for the next response on the same connection. */
  reset(): void {
    this.state = State.Head;
    this.pending = undefined;
    this.remaining = 0;
    this.started = false;
  }

  /** Whether the body runs until the server closes the connection (its close completes it). */
  get readsUntilClose(): boolean {
    return this.state === State.UntilClose;
  }

  /** Whether no byte of a response has come since the last reset(). */
  get idle(): boolean {
    return !this.started;
  }

  push(chunk: Buffer): void {
    if (chunk.length > 0) this.started = true;
    const buf = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = undefined;
    let at = 0;
    while (at < buf.length) {
      switch (this.state) {
        case State.Head: {
          const end = buf.indexOf(HEAD_END, at);
          if (end === -1) {
            // (+3: up to three bytes of the CRLF CRLF may have come)
            if (buf.length - at > maxHeadBytes + 3) throw new Http1ParseError(`response head over ${maxHeadBytes} bytes`);
            this.pending = buf.subarray(at);
            return;
          }
          if (end - at > maxHeadBytes) throw new Http1ParseError(`response head over ${maxHeadBytes} bytes`);
          const head = parseHead(buf.toString('latin1', at, end));
          at = end + 4;
          if (head.status < 200) {
            if (head.status === 101) throw new Http1ParseError('unexpected protocol switch (101)');
            continue; // 100 Continue, 103 Early Hints: the real head follows
          }
          this.sink.onHead(head);
          if (head.contentLength === 0) {
            this.finish(buf, at);
            return;
          }
          if (head.contentLength > 0) {
            this.state = State.Length;
            this.remaining = head.contentLength;
          } else if (head.contentLength === -1 && head.chunked) {
            this.state = State.ChunkSize;
          } else {
            this.state = State.UntilClose;
          }
          break;
        }
        case State.Length:
        case State.ChunkData: {
          const take = Math.min(this.remaining, buf.length - at);
          this.sink.onBody(at === 0 && take === buf.length ? buf : buf.subarray(at, at + take));
          at += take;
          this.remaining -= take;
          if (this.remaining > 0) return;
          if (this.state === State.Length) {
            this.finish(buf, at);
            return;
          }
          this.state = State.ChunkDataEnd;
          break;
        }
        case State.ChunkDataEnd: {
          if (buf.length - at < 2) {
            this.pending = buf.subarray(at);
            return;
          }
          if (buf[at] !== 13 || buf[at + 1] !== 10) throw new Http1ParseError('chunk not followed by CRLF');
          at += 2;
          this.state = State.ChunkSize;
          break;
        }
        case State.ChunkSize:
        case State.Trailers: {
          const end = buf.indexOf(CRLF, at);
          if (end === -1) {
            if (buf.length - at > maxLineBytes + 1) throw new Http1ParseError('chunk-size or trailer line too long');
            this.pending = buf.subarray(at);
            return;
          }
          if (end - at > maxLineBytes) throw new Http1ParseError('chunk-size or trailer line too long');
          const line = buf.toString('latin1', at, end);
          at = end + 2;
          if (this.state === State.Trailers) {
            if (line === '') {
              this.finish(buf, at);
              return;
            }
            const colon = line.indexOf(':');
            if (colon <= 0 || !isToken(line, colon)) throw new Http1ParseError('malformed trailer line');
            break;
          }
          const m = chunkSize.exec(line);
          if (!m) throw new Http1ParseError('malformed chunk size');
          const size = parseInt(m[1]!, 16);
          if (size === 0) this.state = State.Trailers;
          else {
            this.state = State.ChunkData;
            this.remaining = size;
          }
          break;
        }
        case State.UntilClose:
          this.sink.onBody(at === 0 ? buf : buf.subarray(at));
          return;
        case State.Done:
          throw new Http1ParseError('bytes after a complete response');
      }
    }
  }

  private finish(buf: Buffer, at: number): void {
    this.state = State.Done;
    this.sink.onComplete(at < buf.length ? buf.subarray(at) : undefined);
  }
}

interface ParsedHead extends ResponseHead {
  chunked: boolean;
}

/** Status line and header lines (no final CRLF CRLF). Exported for tests. */
export function parseHead(text: string): ParsedHead {
  // Every line ends in CRLF: a CR or LF alone anywhere is an error (checked here once, natively).
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) {
    if (text.charCodeAt(i - 1) !== 13) throw new Http1ParseError('bare CR or LF in the response head');
  }
  for (let i = text.indexOf('\r'); i !== -1; i = text.indexOf('\r', i + 1)) {
    if (text.charCodeAt(i + 1) !== 10) throw new Http1ParseError('bare CR or LF in the response head');
  }
  const lines = text.split('\r\n');
  const first = lines[0]!;
  const status = statusOf(first);
  if (status === 0) throw new Http1ParseError(`malformed status line ${JSON.stringify(first.slice(0, 80))}`);
  const http10 = first.charCodeAt(7) === 48; // HTTP/1.0
  const head: ParsedHead = { status, keepAlive: true, contentLength: -1, keepAliveMs: 0, chunked: false };
  let length: number | undefined;
  let transferEncoding = false;
  let close = false;
  let keepAlive = false;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new Http1ParseError(`malformed header line ${JSON.stringify(line.slice(0, 80))}`);
    if (!isToken(line, colon)) throw new Http1ParseError(`malformed header name ${JSON.stringify(line.slice(0, Math.min(colon, 80)))}`);
    // Only four headers matter here; the others are checked for form and skipped.
    if (colon !== 10 && colon !== 14 && colon !== 17) continue;
    const value = trimOws(line.slice(colon + 1));
    switch (line.slice(0, colon).toLowerCase()) {
      case 'content-length': {
        // A list of equal values is one value (RFC 9110 §8.6); anything else is an error.
        for (const v of value.split(',')) {
          const item = trimOws(v);
          if (!digits.test(item)) throw new Http1ParseError(`invalid Content-Length ${JSON.stringify(value.slice(0, 40))}`);
          if (length !== undefined && length !== Number(item)) throw new Http1ParseError('conflicting Content-Length values');
          length = Number(item);
        }
        break;
      }
      case 'transfer-encoding': {
        if (transferEncoding || value.toLowerCase() !== 'chunked') {
          throw new Http1ParseError(`unsupported Transfer-Encoding ${JSON.stringify(value.slice(0, 40))}`);
        }
        transferEncoding = true;
        break;
      }
      case 'connection': {
        for (const option of value.toLowerCase().split(',')) {
          const o = trimOws(option);
          if (o === 'close') close = true;
          else if (o === 'keep-alive') keepAlive = true;
        }
        break;
      }
      case 'keep-alive': {
        const t = /(?:^|,)[ \t]*timeout[ \t]*=[ \t]*(\d{1,9})/i.exec(value);
        if (t) head.keepAliveMs = Number(t[1]) * 1000;
        break;
      }
    }
  }
  // `close` always wins; HTTP/1.0 keeps the connection only when asked to (RFC 9112 §9.3, §9.6).
  head.keepAlive = !close && (!http10 || keepAlive);
  const bodiless = head.status < 200 || head.status === 204 || head.status === 304;
  if (bodiless) {
    head.contentLength = 0;
  } else if (transferEncoding) {
    head.chunked = true;
    // Chunked with a length too, or chunked in HTTP/1.0: chunked frames this message, and the
    // connection is not to be trusted after it (RFC 9112 §6.1, §6.3).
    if (length !== undefined || http10) head.keepAlive = false;
  } else if (length !== undefined) {
    head.contentLength = length;
  } else {
    head.keepAlive = false; // read until close
  }
  return head;
}

/** Whether `line` up to `end` is a token (RFC 9110 §5.6.2), e.g. a header name. */
function isToken(line: string, end: number): boolean {
  for (let i = 0; i < end; i++) {
    const code = line.charCodeAt(i);
    if (code > 127 || tokenChars[code] === 0) return false;
  }
  return true;
}

/** The status code of `HTTP/1.x NNN[ reason]`, 0 when the line is not one. */
function statusOf(line: string): number {
  if (!line.startsWith('HTTP/1.') || line.length < 12) return 0;
  const minor = line.charCodeAt(7);
  if ((minor !== 48 && minor !== 49) || line.charCodeAt(8) !== 32) return 0;
  if (line.length > 12 && line.charCodeAt(12) !== 32) return 0;
  let status = 0;
  for (let i = 9; i < 12; i++) {
    const d = line.charCodeAt(i) - 48;
    if (d < 0 || d > 9 || (i === 9 && d === 0)) return 0;
    status = status * 10 + d;
  }
  return status;
}

/** Trims HTTP's optional whitespace (space and tab) only. */
function trimOws(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && (s.charCodeAt(start) === 32 || s.charCodeAt(start) === 9)) start += 1;
  while (end > start && (s.charCodeAt(end - 1) === 32 || s.charCodeAt(end - 1) === 9)) end -= 1;
  return start === 0 && end === s.length ? s : s.slice(start, end);
}
