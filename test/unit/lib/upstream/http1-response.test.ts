/**
 * The HTTP/1.1 response parser on hand-written bytes, no sockets. Every accepted response is fed
 * whole, byte by byte and cut in two at every index: the head, the body and the bytes after the
 * message must come out the same however the bytes arrive, as TCP may cut them anywhere. A
 * rejected response must throw an Http1ParseError from push() however it is cut.
 */
import { isDeepStrictEqual } from 'node:util';
import test, { type ExecutionContext } from 'ava';
import {
  Http1ParseError,
  Http1ResponseParser,
  maxHeadBytes,
  parseHead,
  type ResponseHead,
  type ResponseSink,
} from '../../../../lib/upstream/http1-response.js';

/** The chunk-size and trailer line limit of the parser (not exported). */
const maxLineBytes = 4 * 1024;

/** A head from its lines, with the empty line that ends it. */
const head = (...lines: string[]) => `${lines.join('\r\n')}\r\n\r\n`;
const bytes = (data: string | Buffer) => (Buffer.isBuffer(data) ? data : Buffer.from(data, 'latin1'));

/** Records what the parser tells its sink, and checks the order: head, body pieces, complete. */
class RecordingSink implements ResponseSink {
  readonly heads: ResponseHead[] = [];
  readonly pieces: Buffer[] = [];
  readonly completions: Array<Buffer | undefined> = [];
  events = '';
  /** Called at the end of onComplete (e.g. to reset the parser as a connection does). */
  afterComplete: (() => void) | undefined;

  onHead(h: ResponseHead): void {
    this.heads.push(h);
    this.events += 'H';
  }

  onBody(chunk: Buffer): void {
    this.pieces.push(chunk);
    this.events += 'B';
  }

  onComplete(extra: Buffer | undefined): void {
    this.completions.push(extra);
    this.events += 'C';
    this.afterComplete?.();
  }

  get body(): Buffer {
    return Buffer.concat(this.pieces);
  }
}

interface Outcome {
  heads: ResponseHead[];
  /** The body pieces, concatenated. */
  body: Buffer;
  /** The `extra` of each onComplete call. */
  completions: Array<Buffer | undefined>;
  readsUntilClose: boolean;
}

/** Pushes `pieces` into a fresh parser. */
function run(pieces: Buffer[]): Outcome {
  const sink = new RecordingSink();
  const parser = new Http1ResponseParser(sink);
  for (const piece of pieces) parser.push(piece);
  if (!/^(HB*C?)?$/.test(sink.events)) throw new Error(`sink calls out of order: ${sink.events}`);
  return { heads: sink.heads, body: sink.body, completions: sink.completions, readsUntilClose: parser.readsUntilClose };
}

/** The ways to feed `data`: whole, byte by byte, and in two pushes cut at every index. */
function* cuts(data: Buffer): Generator<[string, Buffer[]]> {
  yield ['whole', [data]];
  yield ['byte by byte', Array.from({ length: data.length }, (_, i) => data.subarray(i, i + 1))];
  for (let i = 1; i < data.length; i++) yield [`cut at ${i}`, [data.subarray(0, i), data.subarray(i)]];
}

/** Parses `response` every way it can be cut; all must agree. Returns the outcome. */
function parseEveryWay(t: ExecutionContext, response: string | Buffer): Outcome {
  let first: Outcome | undefined;
  for (const [how, pieces] of cuts(bytes(response))) {
    let outcome: Outcome;
    try {
      outcome = run(pieces);
    } catch (err) {
      throw new Error(`${how}: ${(err as Error).message}`);
    }
    if (!first) first = outcome;
    else if (!isDeepStrictEqual(outcome, first)) t.deepEqual(outcome, first, how);
  }
  return first!;
}

/** `response` must throw an Http1ParseError, matching `message`, every way it can be cut. */
function rejectsEveryWay(t: ExecutionContext, response: string | Buffer, message?: RegExp): void {
  for (const [how, pieces] of cuts(bytes(response))) {
    let error: unknown;
    try {
      run(pieces);
    } catch (err) {
      error = err;
    }
    if (!(error instanceof Http1ParseError) || (message && !message.test(error.message))) {
      t.fail(`${how}: expected an Http1ParseError${message ? ` matching ${message}` : ''}, got ${error === undefined ? 'no error' : String(error)}`);
      return;
    }
  }
  t.pass();
}

/** One head like `expected`, the body, one completion with nothing after. */
function completeOnce(t: ExecutionContext, outcome: Outcome, expected: Partial<ResponseHead>, body: string | Buffer): void {
  t.is(outcome.heads.length, 1);
  t.like(outcome.heads[0], expected);
  t.true(outcome.body.equals(bytes(body)), `body ${JSON.stringify(outcome.body.toString('latin1'))}`);
  t.deepEqual(outcome.completions, [undefined]);
  t.false(outcome.readsUntilClose);
}

/** The final head of a response parsed every way, the body not looked at. */
const headOf = (t: ExecutionContext, response: string) => {
  const outcome = parseEveryWay(t, response);
  t.is(outcome.heads.length, 1);
  return outcome.heads[0]!;
};

const json = '{"jsonrpc":"2.0","id":1,"result":"0x539"}';

// Content-Length bodies

test('should read a Content-Length body however the bytes are cut', (t) => {
  const outcome = parseEveryWay(t, head('HTTP/1.1 200 OK', 'Content-Type: application/json', `Content-Length: ${json.length}`) + json);
  completeOnce(t, outcome, { status: 200, keepAlive: true, contentLength: json.length, keepAliveMs: 0 }, json);
});

test('should read a Content-Length body that contains CRLF CRLF', (t) => {
  const body = 'line one\r\n\r\nHTTP/1.1 200 OK\r\n\r\nend';
  const outcome = parseEveryWay(t, head('HTTP/1.1 200 OK', `Content-Length: ${body.length}`) + body);
  completeOnce(t, outcome, { status: 200, contentLength: body.length }, body);
});

test('should pass non-ASCII body bytes through unchanged', (t) => {
  const body = Buffer.concat([
    Buffer.from('{"name":"é€ 日本 \u2028"}', 'utf8'),
    Buffer.from([0x00, 0x0d, 0x0a, 0x0d, 0x0a, 0x80, 0xc3, 0x28, 0xfe, 0xff]),
  ]);
  const response = Buffer.concat([bytes(head('HTTP/1.1 200 OK', `Content-Length: ${body.length}`)), body]);
  const outcome = parseEveryWay(t, response);
  completeOnce(t, outcome, { status: 200, contentLength: body.length }, body);
});

test('should complete at once on Content-Length: 0', (t) => {
  const outcome = parseEveryWay(t, head('HTTP/1.1 200 OK', 'Content-Length: 0'));
  completeOnce(t, outcome, { status: 200, keepAlive: true, contentLength: 0 }, '');
  t.is(outcome.body.length, 0);
});

test('should complete a 204 without a body and keep the connection', (t) => {
  const outcome = parseEveryWay(t, head('HTTP/1.1 204 No Content', 'Date: Mon, 01 Jan 2024 00:00:00 GMT'));
  completeOnce(t, outcome, { status: 204, keepAlive: true }, '');
});

test('should complete a 304 without a body, even with a Content-Length', (t) => {
  const outcome = parseEveryWay(t, head('HTTP/1.1 304 Not Modified', 'ETag: "abc"', 'Content-Length: 120'));
  completeOnce(t, outcome, { status: 304, keepAlive: true }, '');
});

test('should accept repeated equal Content-Length values', (t) => {
  const listed = parseEveryWay(t, head('HTTP/1.1 200 OK', 'Content-Length: 5, 5') + 'hello');
  completeOnce(t, listed, { contentLength: 5, keepAlive: true }, 'hello');
  const repeated = parseEveryWay(t, head('HTTP/1.1 200 OK', 'Content-Length: 5', 'Content-Length: 5') + 'hello');
  completeOnce(t, repeated, { contentLength: 5, keepAlive: true }, 'hello');
});

test('should deliver a Content-Length body that comes in pushes after the head', (t) => {
  const sink = new RecordingSink();
  const parser = new Http1ResponseParser(sink);
  parser.push(bytes(head('HTTP/1.1 200 OK', 'Content-Length: 5')));
  t.is(sink.heads.length, 1);
  t.deepEqual(sink.completions, []);
  t.false(parser.readsUntilClose);
  parser.push(bytes('hel'));
  parser.push(bytes('lo'));
  t.is(sink.body.toString(), 'hello');
  t.deepEqual(sink.completions, [undefined]);
});

// Chunked bodies

test('should de-chunk a body of several chunks', (t) => {
  const response = head('HTTP/1.1 200 OK', 'Transfer-Encoding: chunked') + '5\r\nhello\r\n1\r\n,\r\n6\r\n world\r\n0\r\n\r\n';
  const outcome = parseEveryWay(t, response);
  completeOnce(t, outcome, { status: 200, keepAlive: true, contentLength: -1 }, 'hello, world');
});

test('should de-chunk chunks whose data contains CRLF and chunk-like text', (t) => {
  const data = '\r\n0\r\n\r\n';
  const response = head('HTTP/1.1 200 OK', 'Transfer-Encoding: chunked') + `${data.length.toString(16)}\r\n${data}\r\n0\r\n\r\n`;
  completeOnce(t, parseEveryWay(t, response), { status: 200 }, data);
});

test('should accept a chunk extension', (t) => {
  const response = head('HTTP/1.1 200 OK', 'Transfer-Encoding: chunked') + '5;name=value\r\nhello\r\n3 ; a="b c"\r\nabc\r\n0;last\r\n\r\n';
  completeOnce(t, parseEveryWay(t, response), { status: 200, contentLength: -1 }, 'helloabc');
});

test('should read upper-case and lower-case hex chunk sizes', (t) => {
  const a = 'a'.repeat(0x1a);
  const b = 'b'.repeat(0x2f);
  const response = head('HTTP/1.1 200 OK', 'Transfer-Encoding: chunked') + `1A\r\n${a}\r\n2f\r\n${b}\r\n00\r\n\r\n`;
  completeOnce(t, parseEveryWay(t, response), { status: 200 }, a + b);
});

test('should skip trailers after the last chunk', (t) => {
  const response =
    head('HTTP/1.1 200 OK', 'Transfer-Encoding: chunked', 'Trailer: X-Checksum') +
    '4\r\nbody\r\n0\r\nX-Checksum: abc123\r\nServer-Timing: db;dur=53\r\n\r\n';
  completeOnce(t, parseEveryWay(t, response), { status: 200, keepAlive: true }, 'body');
});

test('should match the chunked Transfer-Encoding case-insensitively', (t) => {
  const response = head('HTTP/1.1 200 OK', 'transfer-encoding: Chunked') + '2\r\nok\r\n0\r\n\r\n';
  completeOnce(t, parseEveryWay(t, response), { status: 200 }, 'ok');
});

test('should let chunked framing win over Content-Length and not keep the connection', (t) => {
  const body = '5\r\nhello\r\n0\r\n\r\n';
  const after = parseEveryWay(t, head('HTTP/1.1 200 OK', 'Transfer-Encoding: chunked', 'Content-Length: 3') + body);
  completeOnce(t, after, { status: 200, keepAlive: false, contentLength: -1 }, 'hello');
  const before = parseEveryWay(t, head('HTTP/1.1 200 OK', `Content-Length: ${body.length}`, 'Transfer-Encoding: chunked') + body);
  completeOnce(t, before, { status: 200, keepAlive: false, contentLength: -1 }, 'hello');
});

// Interim heads

test('should skip 100 Continue and 103 Early Hints heads before the final head', (t) => {
  const response =
    head('HTTP/1.1 100 Continue') +
    head('HTTP/1.1 103 Early Hints', 'Link: </style.css>; rel=preload; as=style') +
    head('HTTP/1.1 200 OK', 'Content-Length: 2') +
    'ok';
  const outcome = parseEveryWay(t, response);
  completeOnce(t, outcome, { status: 200, keepAlive: true, contentLength: 2 }, 'ok');
  t.is(outcome.heads.length, 1);
});

test('should reject a 101 Switching Protocols', (t) => {
  rejectsEveryWay(t, head('HTTP/1.1 101 Switching Protocols', 'Upgrade: websocket', 'Connection: Upgrade'), /101/);
  const sink = new RecordingSink();
  t.throws(() => new Http1ResponseParser(sink).push(bytes(head('HTTP/1.1 101 Switching Protocols'))), { instanceOf: Http1ParseError });
  t.is(sink.heads.length, 0);
});

// Bodies read until the connection closes

test('should read a body without length until the connection closes', (t) => {
  const response = head('HTTP/1.1 200 OK', 'Content-Type: application/json') + json;
  const outcome = parseEveryWay(t, response);
  t.is(outcome.heads.length, 1);
  t.like(outcome.heads[0], { status: 200, keepAlive: false, contentLength: -1 });
  t.is(outcome.body.toString(), json);
  t.deepEqual(outcome.completions, []);
  t.true(outcome.readsUntilClose);
});

test('should read until close from the end of the head, before any body byte', (t) => {
  const sink = new RecordingSink();
  const parser = new Http1ResponseParser(sink);
  parser.push(bytes('HTTP/1.0 200 OK\r\nServer: x\r\n\r'));
  t.false(parser.readsUntilClose);
  t.is(sink.heads.length, 0);
  parser.push(bytes('\n'));
  t.true(parser.readsUntilClose);
  t.like(sink.heads[0], { status: 200, keepAlive: false, contentLength: -1 });
  parser.push(bytes('first '));
  parser.push(bytes('second\r\n\r\n'));
  parser.push(bytes('HTTP/1.1 200 OK\r\n\r\n'));
  t.is(sink.body.toString(), 'first second\r\n\r\nHTTP/1.1 200 OK\r\n\r\n');
  t.deepEqual(sink.completions, []);
  t.true(parser.readsUntilClose);
});

test('should not keep alive a body read until close, even on Connection: keep-alive', (t) => {
  t.like(headOf(t, head('HTTP/1.0 200 OK', 'Connection: keep-alive') + 'abc'), { keepAlive: false, contentLength: -1 });
  t.like(headOf(t, head('HTTP/1.1 200 OK', 'Connection: keep-alive') + 'abc'), { keepAlive: false, contentLength: -1 });
});

// Keep-alive

test('should keep HTTP/1.1 connections alive by default', (t) => {
  t.like(headOf(t, head('HTTP/1.1 200 OK', 'Content-Length: 0')), { keepAlive: true, keepAliveMs: 0 });
});

test('should not keep the connection on Connection: close', (t) => {
  t.like(headOf(t, head('HTTP/1.1 200 OK', 'Connection: close', 'Content-Length: 0')), { keepAlive: false });
  t.like(headOf(t, head('HTTP/1.1 200 OK', 'Connection: Upgrade, close', 'Content-Length: 0')), { keepAlive: false });
});

test('should not keep HTTP/1.0 connections alive by default', (t) => {
  t.like(headOf(t, head('HTTP/1.0 200 OK', 'Content-Length: 2') + 'ok'), { status: 200, keepAlive: false, contentLength: 2 });
});

test('should keep an HTTP/1.0 connection alive on Connection: keep-alive', (t) => {
  t.like(headOf(t, head('HTTP/1.0 200 OK', 'Connection: keep-alive', 'Content-Length: 2') + 'ok'), { keepAlive: true });
});

test('should read the Keep-Alive timeout hint in ms', (t) => {
  t.like(headOf(t, head('HTTP/1.1 200 OK', 'Keep-Alive: timeout=5, max=100', 'Content-Length: 0')), { keepAlive: true, keepAliveMs: 5000 });
  t.like(headOf(t, head('HTTP/1.1 200 OK', 'Keep-Alive: max=100, timeout=30', 'Content-Length: 0')), { keepAliveMs: 30_000 });
  t.like(headOf(t, head('HTTP/1.1 200 OK', 'Keep-Alive: max=100', 'Content-Length: 0')), { keepAliveMs: 0 });
});

test('should match header names case-insensitively', (t) => {
  t.like(headOf(t, head('HTTP/1.1 200 OK', 'CONNECTION: CLOSE', 'content-length: 0')), { keepAlive: false, contentLength: 0 });
  t.like(headOf(t, head('HTTP/1.0 200 OK', 'connection: Keep-Alive', 'CONTENT-LENGTH: 2') + 'ok'), { keepAlive: true, contentLength: 2 });
  t.like(headOf(t, head('HTTP/1.1 200 OK', 'keep-alive: TIMEOUT=7', 'Content-length: 0')), { keepAliveMs: 7000 });
  const chunked = parseEveryWay(t, head('HTTP/1.1 200 OK', 'TRANSFER-ENCODING: chunked') + '2\r\nok\r\n0\r\n\r\n');
  completeOnce(t, chunked, { contentLength: -1 }, 'ok');
});

test('should give the same head from parseHead as from the parser', (t) => {
  t.like(parseHead('HTTP/1.1 200 OK\r\nContent-Length: 12\r\nKeep-Alive: timeout=4'), {
    status: 200,
    keepAlive: true,
    contentLength: 12,
    keepAliveMs: 4000,
    chunked: false,
  });
  t.like(parseHead('HTTP/1.1 200'), { status: 200, keepAlive: false, contentLength: -1, chunked: false });
  t.like(parseHead('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked'), { keepAlive: true, contentLength: -1, chunked: true });
  t.like(parseHead('HTTP/1.0 204 No Content'), { status: 204, keepAlive: false });
});

// Bytes after the response, reset() and idle

test('should pass the bytes after a complete response as extra', (t) => {
  const first = head('HTTP/1.1 200 OK', 'Content-Length: 5') + 'hello';
  const second = head('HTTP/1.1 200 OK', 'Content-Length: 3') + 'bye';
  const data = bytes(first + second);
  // Any cut before the end of the first response leaves the whole second one in the last push.
  for (let i = 0; i < first.length; i++) {
    const outcome = run(i === 0 ? [data] : [data.subarray(0, i), data.subarray(i)]);
    if (outcome.completions.length !== 1 || !outcome.completions[0]?.equals(bytes(second)) || outcome.body.toString() !== 'hello') {
      t.fail(`cut at ${i}: ${JSON.stringify(outcome.completions.map((e) => e?.toString('latin1')))}`);
      return;
    }
  }
  t.pass();
});

test('should pass extra bytes after chunked, zero-length, 204 and interim-headed responses', (t) => {
  const cases = [
    head('HTTP/1.1 200 OK', 'Transfer-Encoding: chunked') + '2\r\nok\r\n0\r\nX-T: 1\r\n\r\n',
    head('HTTP/1.1 200 OK', 'Content-Length: 0'),
    head('HTTP/1.1 204 No Content'),
    head('HTTP/1.1 304 Not Modified', 'Content-Length: 10'),
    head('HTTP/1.1 100 Continue') + head('HTTP/1.1 200 OK', 'Content-Length: 1') + 'x',
  ];
  for (const response of cases) {
    const outcome = run([bytes(`${response}XYZ`)]);
    t.is(outcome.completions.length, 1, response);
    t.is(outcome.completions[0]?.toString(), 'XYZ', response);
  }
});

test('should leave the extra bytes to the caller, and parse them after reset()', (t) => {
  const first = head('HTTP/1.1 200 OK', 'Content-Length: 5') + 'hello';
  const second = head('HTTP/1.1 201 Created', 'Transfer-Encoding: chunked', 'Keep-Alive: timeout=2') + '3\r\nbye\r\n0\r\n\r\n';
  const sink = new RecordingSink();
  const parser = new Http1ResponseParser(sink);
  parser.push(bytes(first + second));
  t.is(sink.heads.length, 1);
  t.is(sink.body.toString(), 'hello');
  t.is(sink.completions.length, 1);
  const extra = sink.completions[0]!;
  t.is(extra.toString(), second);
  t.false(parser.idle);

  parser.reset();
  t.true(parser.idle);
  parser.push(extra);
  t.is(sink.heads.length, 2);
  t.like(sink.heads[1], { status: 201, keepAlive: true, contentLength: -1, keepAliveMs: 2000 });
  t.is(sink.body.toString(), 'hellobye');
  t.deepEqual(sink.completions, [extra, undefined]);
});

test('should parse the next response after a reset() from within onComplete', (t) => {
  const sink = new RecordingSink();
  const parser = new Http1ResponseParser(sink);
  sink.afterComplete = () => parser.reset();
  for (let n = 1; n <= 3; n++) {
    const body = `answer ${n}`;
    const response = bytes(head('HTTP/1.1 200 OK', `Content-Length: ${body.length}`) + body);
    for (const [how, pieces] of cuts(response)) {
      if (how !== 'whole' && how !== 'byte by byte' && how !== 'cut at 20') continue;
      for (const piece of pieces) parser.push(piece);
      t.true(parser.idle, how);
    }
  }
  t.is(sink.heads.length, 9);
  t.is(sink.completions.length, 9);
  t.true(sink.completions.every((extra) => extra === undefined));
  t.is(sink.body.toString(), 'answer 1'.repeat(3) + 'answer 2'.repeat(3) + 'answer 3'.repeat(3));
});

test('should be idle only until a byte of a response comes', (t) => {
  const sink = new RecordingSink();
  const parser = new Http1ResponseParser(sink);
  t.true(parser.idle);
  parser.push(Buffer.alloc(0));
  t.true(parser.idle);
  parser.push(bytes('H'));
  t.false(parser.idle);
  parser.push(bytes('TTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n'));
  t.false(parser.idle);
  parser.push(bytes('o'));
  t.false(parser.idle);
  parser.push(bytes('k'));
  t.is(sink.completions.length, 1);
  t.false(parser.idle);
  parser.reset();
  t.true(parser.idle);
  t.false(parser.readsUntilClose);
  parser.push(bytes('H'));
  t.false(parser.idle);
});

test('should forget an unfinished response on reset()', (t) => {
  const sink = new RecordingSink();
  const parser = new Http1ResponseParser(sink);
  parser.push(bytes(head('HTTP/1.1 200 OK', 'Transfer-Encoding: chunked') + '5\r\nhel'));
  parser.reset();
  t.true(parser.idle);
  parser.push(bytes(head('HTTP/1.1 200 OK', 'Content-Length: 2') + 'ok'));
  t.is(sink.heads.length, 2);
  t.is(sink.body.toString(), 'helok');
  t.deepEqual(sink.completions, [undefined]);
});

test('should not be idle once an interim 1xx head came', (t) => {
  // idle means "no byte of a response since the last reset()": the transport sends a call again
  // only then, and a 100 Continue is a byte of the answer.
  const parser = new Http1ResponseParser(new RecordingSink());
  parser.push(bytes(head('HTTP/1.1 100 Continue')));
  t.false(parser.idle);
});

// Errors

test('should reject malformed status lines', (t) => {
  for (const line of [
    'HTTP/2 200 OK',
    'HTTP/1.1 20 OK',
    'HTTP/1.1 2000 OK',
    'HTTP/1.1 099 Low',
    'HTTP/1.2 200 OK',
    'HTTP/1.1  200 OK',
    'HTTP/1.1 200OK',
    'http/1.1 200 OK',
    ' HTTP/1.1 200 OK',
    'HTTP/1.1 abc OK',
    'garbage',
    '',
  ]) {
    rejectsEveryWay(t, head(line, 'Content-Length: 0'), /status line/);
  }
  rejectsEveryWay(t, '\0\x16\x03\x01 binary garbage\r\n\r\n', /status line/);
});

test('should reject a header line without a colon', (t) => {
  rejectsEveryWay(t, head('HTTP/1.1 200 OK', 'Content-Length 5') + 'hello', /header line/);
  rejectsEveryWay(t, head('HTTP/1.1 200 OK', ': no name', 'Content-Length: 0'), /header line/);
});

test('should reject a header name that is not a token', (t) => {
  rejectsEveryWay(t, head('HTTP/1.1 200 OK', 'Content-Length : 5') + 'hello', /header name/);
  rejectsEveryWay(t, head('HTTP/1.1 200 OK', 'Content-Length\t: 5') + 'hello', /header name/);
  rejectsEveryWay(t, head('HTTP/1.1 200 OK', 'X(Bad): 1', 'Content-Length: 0'), /header name/);
  rejectsEveryWay(t, head('HTTP/1.1 200 OK', 'X-\u00e9: 1', 'Content-Length: 0'), /header name/);
});

test('should reject obs-fold continuation lines', (t) => {
  rejectsEveryWay(t, head('HTTP/1.1 200 OK', 'X-Long: a', ' b', 'Content-Length: 0'), /header/);
  rejectsEveryWay(t, head('HTTP/1.1 200 OK', 'X-Long: a', '\tb', 'Content-Length: 0'), /header/);
  rejectsEveryWay(t, head('HTTP/1.1 200 OK', 'Content-Length: 2', ' Transfer-Encoding: chunked') + 'ok', /header/);
});

test('should reject a bare LF or CR inside a header line', (t) => {
  rejectsEveryWay(t, head('HTTP/1.1 200 OK', 'X-A: a\nContent-Length: 5') + 'hello', /bare CR or LF/);
  rejectsEveryWay(t, head('HTTP/1.1 200 OK', 'Content-Length: 5\nX-A: a') + 'hello', /bare CR or LF/);
  rejectsEveryWay(t, head('HTTP/1.1 200 OK', 'X-A: a\rb', 'Content-Length: 0'), /bare CR or LF/);
  rejectsEveryWay(t, head('HTTP/1.1 200 OK', 'Content-Length: 0', 'X-A: a\n'), /bare CR or LF/);
  rejectsEveryWay(t, head('HTTP/1.1 200 OK\n', 'Content-Length: 0'), /bare CR or LF/);
});

test('should reject a Content-Length that is not digits', (t) => {
  for (const value of ['-1', '1e3', '0x10', '', '+5', '5.0', '5 5', '5,', ',5', 'five', '1234567890123456']) {
    rejectsEveryWay(t, head('HTTP/1.1 200 OK', `Content-Length: ${value}`) + 'hello', /invalid Content-Length/);
  }
});

test('should reject conflicting Content-Length values', (t) => {
  rejectsEveryWay(t, head('HTTP/1.1 200 OK', 'Content-Length: 5', 'Content-Length: 6') + 'hello!', /conflicting Content-Length/);
  rejectsEveryWay(t, head('HTTP/1.1 200 OK', 'Content-Length: 5, 6') + 'hello!', /conflicting Content-Length/);
  rejectsEveryWay(t, head('HTTP/1.1 200 OK', 'Content-Length: 5, 5', 'Content-Length: 6') + 'hello!', /conflicting Content-Length/);
});

test('should reject a Transfer-Encoding other than chunked', (t) => {
  rejectsEveryWay(t, head('HTTP/1.1 200 OK', 'Transfer-Encoding: gzip') + 'hello', /Transfer-Encoding/);
  rejectsEveryWay(t, head('HTTP/1.1 200 OK', 'Transfer-Encoding: gzip, chunked') + '5\r\nhello\r\n0\r\n\r\n', /Transfer-Encoding/);
  rejectsEveryWay(t, head('HTTP/1.1 200 OK', 'Transfer-Encoding: chunked, chunked') + '5\r\nhello\r\n0\r\n\r\n', /Transfer-Encoding/);
  rejectsEveryWay(t, head('HTTP/1.1 200 OK', 'Transfer-Encoding: identity', 'Content-Length: 5') + 'hello', /Transfer-Encoding/);
  rejectsEveryWay(t, head('HTTP/1.1 200 OK', 'Transfer-Encoding:') + 'hello', /Transfer-Encoding/);
  rejectsEveryWay(
    t,
    head('HTTP/1.1 200 OK', 'Transfer-Encoding: chunked', 'Transfer-Encoding: chunked') + '5\r\nhello\r\n0\r\n\r\n',
    /Transfer-Encoding/,
  );
  rejectsEveryWay(t, head('HTTP/1.1 200 OK', 'Transfer-Encoding: chunked', 'Transfer-Encoding: gzip') + '5\r\nhello\r\n0\r\n\r\n', /Transfer-Encoding/);
});

test('should reject a malformed chunk size', (t) => {
  const chunked = head('HTTP/1.1 200 OK', 'Transfer-Encoding: chunked');
  for (const size of ['zz', '', '-5', '0x5', '+5', ' 5', '5 5', '1000000000000']) {
    rejectsEveryWay(t, `${chunked}${size}\r\nhello\r\n0\r\n\r\n`, /chunk size/);
  }
  rejectsEveryWay(t, `${chunked}5\r\nhello\r\nzz\r\n\r\n`, /chunk size/);
  rejectsEveryWay(t, `${chunked}5\nhello\r\n0\r\n\r\n`, /chunk/);
});

test('should reject chunk data not followed by CRLF', (t) => {
  const chunked = head('HTTP/1.1 200 OK', 'Transfer-Encoding: chunked');
  rejectsEveryWay(t, `${chunked}5\r\nhello!\r\n0\r\n\r\n`, /not followed by CRLF/);
  rejectsEveryWay(t, `${chunked}5\r\nhello\n0\r\n\r\n`, /not followed by CRLF/);
  rejectsEveryWay(t, `${chunked}5\r\nhello\r\r\n0\r\n\r\n`, /not followed by CRLF/);
  rejectsEveryWay(t, `${chunked}3\r\nhello\r\n0\r\n\r\n`, /not followed by CRLF/);
});

test('should reject a malformed trailer line', (t) => {
  const chunked = head('HTTP/1.1 200 OK', 'Transfer-Encoding: chunked');
  rejectsEveryWay(t, `${chunked}2\r\nok\r\n0\r\nno colon\r\n\r\n`, /trailer/);
  rejectsEveryWay(t, `${chunked}2\r\nok\r\n0\r\nX-T: 1\r\n folded\r\n\r\n`, /trailer/);
});

test('should reject a push after a complete response without reset()', (t) => {
  const sink = new RecordingSink();
  const parser = new Http1ResponseParser(sink);
  parser.push(bytes(head('HTTP/1.1 200 OK', 'Content-Length: 2') + 'ok'));
  t.deepEqual(sink.completions, [undefined]);
  t.throws(() => parser.push(bytes('HTTP/1.1 200 OK\r\n')), { instanceOf: Http1ParseError, message: /after a complete response/ });
  t.throws(() => parser.push(bytes('x')), { instanceOf: Http1ParseError, message: /after a complete response/ });
  t.is(sink.heads.length, 1);
  t.is(sink.completions.length, 1);
});

test('should throw errors that are Http1ParseError instances named Http1ParseError', (t) => {
  const error = t.throws(() => new Http1ResponseParser(new RecordingSink()).push(bytes(head('HTTP/2 200'))), { instanceOf: Http1ParseError });
  t.true(error instanceof Error);
  t.is(error?.name, 'Http1ParseError');
  t.throws(() => parseHead('HTTP/1.1 200 OK\r\nContent-Length: x'), { instanceOf: Http1ParseError });
});

// Size limits

/** A head of exactly `size` bytes before its final CRLF CRLF, with Content-Length: 2. */
function headOfSize(size: number): string {
  const start = 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Filler: ';
  return start + 'a'.repeat(size - start.length);
}

test('should reject a head over maxHeadBytes without its end before buffering more', (t) => {
  const sink = new RecordingSink();
  const parser = new Http1ResponseParser(sink);
  const start = bytes('HTTP/1.1 200 OK\r\nX-Filler: ');
  parser.push(start);
  let sent = start.length;
  const piece = Buffer.alloc(1024, 'a');
  while (sent + piece.length <= maxHeadBytes) {
    parser.push(piece);
    sent += piece.length;
  }
  parser.push(Buffer.alloc(maxHeadBytes - sent, 'a'));
  t.false(parser.idle);
  // Up to 3 more bytes may be the start of the head's CRLF CRLF; the 4th cannot.
  parser.push(bytes('aaa'));
  t.throws(() => parser.push(bytes('a')), { instanceOf: Http1ParseError, message: /head over/ });
  t.is(sink.heads.length, 0);

  const once = new Http1ResponseParser(new RecordingSink());
  t.throws(() => once.push(Buffer.alloc(maxHeadBytes + 4, 'a')), { instanceOf: Http1ParseError, message: /head over/ });
  const large = new Http1ResponseParser(new RecordingSink());
  t.throws(() => large.push(Buffer.alloc(10 * maxHeadBytes, 'a')), { instanceOf: Http1ParseError, message: /head over/ });
});

test('should reject a complete head over maxHeadBytes', (t) => {
  const response = bytes(`${headOfSize(maxHeadBytes + 1)}\r\n\r\nok`);
  const sink = new RecordingSink();
  t.throws(() => new Http1ResponseParser(sink).push(response), { instanceOf: Http1ParseError, message: /head over/ });
  t.is(sink.heads.length, 0);
});

test('should accept a head just under maxHeadBytes however it is cut around its end', (t) => {
  const text = headOfSize(maxHeadBytes - 3);
  const response = bytes(`${text}\r\n\r\nok`);
  for (const at of [0, 1, 1024, text.length - 1, text.length, text.length + 1, text.length + 2, text.length + 3, text.length + 4, text.length + 5]) {
    const outcome = run(at === 0 ? [response] : [response.subarray(0, at), response.subarray(at)]);
    t.is(outcome.body.toString(), 'ok', `cut at ${at}`);
    t.deepEqual(outcome.completions, [undefined], `cut at ${at}`);
  }
});

test('should accept a head of exactly maxHeadBytes however it is cut', (t) => {
  // Cut inside its CRLF CRLF, the unfinished head is maxHeadBytes + 1..3 bytes: still accepted.
  const text = headOfSize(maxHeadBytes);
  const response = bytes(`${text}\r\n\r\nok`);
  t.is(run([response]).body.toString(), 'ok');
  for (const at of [text.length + 1, text.length + 2, text.length + 3]) {
    t.notThrows(() => run([response.subarray(0, at), response.subarray(at)]), `cut at ${at}`);
  }
});

test('should reject a chunk-size line over 4 KiB', (t) => {
  const chunked = head('HTTP/1.1 200 OK', 'Transfer-Encoding: chunked');
  const long = `5;${'x'.repeat(maxLineBytes)}`;
  t.throws(() => run([bytes(`${chunked}${long}\r\nhello\r\n0\r\n\r\n`)]), { instanceOf: Http1ParseError, message: /line too long/ });
  // Without its end: rejected once more than the limit is buffered, not later.
  const sink = new RecordingSink();
  const parser = new Http1ResponseParser(sink);
  parser.push(bytes(chunked));
  parser.push(bytes('5;'));
  parser.push(Buffer.alloc(maxLineBytes - 2, 'x'));
  parser.push(bytes('x')); // may be followed by LF: a line of exactly the limit ending in CR
  t.throws(() => parser.push(bytes('x')), { instanceOf: Http1ParseError, message: /line too long/ });
  t.throws(() => run([bytes(chunked), Buffer.alloc(1024 * 1024, '0')]), { instanceOf: Http1ParseError, message: /line too long/ });
  // A trailer line has the same limit.
  t.throws(() => run([bytes(`${chunked}0\r\nX-T: ${'y'.repeat(maxLineBytes)}\r\n\r\n`)]), { instanceOf: Http1ParseError, message: /line too long/ });
});

test('should accept a chunk-size line just under 4 KiB however it is cut around its end', (t) => {
  const chunked = head('HTTP/1.1 200 OK', 'Transfer-Encoding: chunked');
  const line = `5;${'x'.repeat(maxLineBytes - 4)}`;
  const response = bytes(`${chunked}${line}\r\nhello\r\n0\r\n\r\n`);
  const end = chunked.length + line.length;
  for (const at of [0, chunked.length + 1, end - 1, end, end + 1, end + 2]) {
    const outcome = run(at === 0 ? [response] : [response.subarray(0, at), response.subarray(at)]);
    t.is(outcome.body.toString(), 'hello', `cut at ${at}`);
    t.deepEqual(outcome.completions, [undefined], `cut at ${at}`);
  }
});

test('should accept a chunk-size line of exactly 4 KiB however it is cut', (t) => {
  // Cut between its CR and LF, the unfinished line is maxLineBytes + 1 bytes: still accepted.
  const chunked = head('HTTP/1.1 200 OK', 'Transfer-Encoding: chunked');
  const line = `5;${'x'.repeat(maxLineBytes - 2)}`;
  const response = bytes(`${chunked}${line}\r\nhello\r\n0\r\n\r\n`);
  t.is(run([response]).body.toString(), 'hello');
  const at = chunked.length + line.length + 1;
  t.notThrows(() => run([response.subarray(0, at), response.subarray(at)]));
});

// Connection semantics of HTTP/1.0

test('should not keep an HTTP/1.0 connection when close comes before keep-alive', (t) => {
  // "close" means the server closes after this response (RFC 9112 §9.6), whatever else is listed.
  t.like(parseHead('HTTP/1.0 200 OK\r\nConnection: close, keep-alive\r\nContent-Length: 0'), { keepAlive: false });
  t.like(parseHead('HTTP/1.0 200 OK\r\nConnection: close\r\nConnection: keep-alive\r\nContent-Length: 0'), { keepAlive: false });
});

test('should not keep an HTTP/1.0 connection whose response has Transfer-Encoding', (t) => {
  // RFC 9112 §6.1: an HTTP/1.0 message with Transfer-Encoding is to be treated as faulty framing,
  // and the connection closed after it.
  t.like(parseHead('HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked'), { keepAlive: false });
});

test('should trim only spaces and tabs around header values', (t) => {
  t.like(parseHead('HTTP/1.1 200 OK\r\nContent-Length: \t 5 \t'), { contentLength: 5 });
  t.throws(() => parseHead('HTTP/1.1 200 OK\r\nContent-Length: \u000b5\u00a0'), { instanceOf: Http1ParseError, message: /invalid Content-Length/ });
  t.throws(() => parseHead('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\f'), { instanceOf: Http1ParseError, message: /unsupported Transfer-Encoding/ });
});

test('should compare repeated Content-Length values as numbers', (t) => {
  t.like(parseHead('HTTP/1.1 200 OK\r\nContent-Length: 05, 5'), { contentLength: 5 });
});

test('should report no body length for 204 and 304 heads, whatever their Content-Length says', (t) => {
  t.like(parseHead('HTTP/1.1 304 Not Modified\r\nContent-Length: 120'), { contentLength: 0, keepAlive: true });
  t.like(parseHead('HTTP/1.1 204 No Content'), { contentLength: 0, keepAlive: true });
});
