/**
 * Issue 5, hardening: a property-based test throws at least 10,000 generated malformed requests
 * (bodies, ids, params, paths, methods, block tags, nested batches, huge numbers, unicode,
 * invalid UTF-8, headers) at a running gateway (the real pipeline in a connect app) with fake
 * upstreams (honest, liar, pretty: confirmable requests escalate past the liar at N=2 and get a 502 at N=3). Every
 * answer must be a well-formed JSON-RPC error or answer with the client's id (or null), with a
 * documented status, never a 500, never a hang or a dropped connection; afterwards the gateway
 * still answers normal requests and the fakes are alive.
 *
 * What each answer must be is worked out from the bytes sent (lib/pipeline/README.md "Errors", spec B5), not from
 * the generator. Deterministic: the seed is fixed. Knobs (environment): FUZZ_SEED=<int> another
 * seed (the burst property uses seed + 1), FUZZ_RUNS=<n> requests sent one at a time (default
 * 10,000), FUZZ_BURST_RUNS=<n> bursts of 8 concurrent requests (default 250), FUZZ_SHRINK=0 report
 * the first failing input without shrinking it.
 */
import http from 'node:http';
import test, { type ExecutionContext } from 'ava';
import fc from 'fast-check';
import type { Logger, LogFn } from '../../../lib/log.js';
import { defaultAnswer, startFakeUpstream, type AnswerFn, type FakeUpstream } from '../../support/fake-upstream.js';
import { fuzzRequest, type FuzzRequest } from '../../support/fuzz-arbitraries.js';
import { rpc, startGateway, type Gateway } from '../../support/gateway.js';

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : 0x5eed_0005;
const RUNS = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : 10_000;
/** The second property sends bursts of concurrent requests (answers must not get mixed up). */
const BURST_SIZE = 8;
const BURST_RUNS = process.env.FUZZ_BURST_RUNS ? Number(process.env.FUZZ_BURST_RUNS) : 250;
const CLIENT_TIMEOUT_MS = 10_000;
const BODY_LIMIT = 256 * 1024;
const BATCH_LIMIT = 50;
const CHAIN_CONFIRMATIONS = 2;

/** HTTP status → the JSON-RPC codes lib/pipeline/README.md "Errors" allows with it. */
const codesByStatus: Record<number, number[]> = {
  // omnigate's own errors that a node sends itself, with 200 as a node sends them (spec B5)
  200: [-32601, -32602],
  400: [-32700, -32600, -32002, -32003, -32007, -32009],
  404: [-32001, -32008],
  405: [-32004],
  413: [-32006],
  502: [-32010, -32011],
  504: [-32012],
};
const documentedStatuses = new Set([200, 204, 400, 404, 405, 413, 415, 502, 504]);

let fakes: FakeUpstream[];
let gw: Gateway;
let port: number;
const errorLogs: unknown[] = [];

// The fake renders `method:JSON.stringify(params)`; params nested thousands deep would overflow
// its stack (a crash of the test process, not of the gateway), so it answers a placeholder then.
const safeAnswer: AnswerFn = (call) => {
  try {
    return defaultAnswer(call);
  } catch {
    return { result: `${call.method}:<unrenderable params>` };
  }
};

function capturingLogger(): Logger {
  const noop = (() => {}) as LogFn;
  const error = ((obj: unknown, msg?: string) => errorLogs.push({ obj, msg })) as LogFn;
  const logger: Logger = { debug: noop, info: noop, warn: noop, error, child: () => logger };
  return logger;
}

test.before(async () => {
  fakes = await Promise.all([
    // the liar second: a confirmable request at N=2 needs an escalation to the third, at N=3 it gets a 502
    startFakeUpstream({ profile: 'honest', answer: safeAnswer }),
    startFakeUpstream({ profile: 'liar', answer: safeAnswer }),
    startFakeUpstream({ profile: 'pretty', answer: safeAnswer }),
  ]);
  gw = await startGateway(
    {
      limits: { bodyBytes: BODY_LIMIT, batchSize: BATCH_LIMIT },
      timeouts: { upstreamMs: 2000, requestMs: 5000 },
      chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations: CHAIN_CONFIRMATIONS } },
    },
    { framework: 'connect', logger: capturingLogger() },
  );
  port = Number(new URL(gw.url).port);
});

test.after.always(async () => {
  keepAliveAgent.destroy();
  await gw?.close();
  await Promise.all((fakes ?? []).map((f) => f.close()));
});

// ---------------------------------------------------------------------------------------------
// The client: raw path, raw bytes, optional chunked body, a hard timeout

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  bytes: Buffer;
}

/** Shared by the requests generated with keepAlive: later ones ride on connections earlier ones left open. */
const keepAliveAgent = new http.Agent({ keepAlive: true, maxSockets: 2 });

function send(r: FuzzRequest): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
    };
    const bytes = r.body.bytes;
    const chunked = r.chunks > 1 && bytes.length > 0;
    const methodHasBody = !['GET', 'HEAD', 'OPTIONS', 'DELETE', 'TRACE'].includes(r.method.toUpperCase());
    // Framing stated explicitly: Node sends a DELETE/GET body without Content-Length otherwise.
    const headers: Record<string, string | string[]> = { ...r.headers };
    if (chunked) headers['transfer-encoding'] = 'chunked';
    else if (bytes.length > 0 || methodHasBody) headers['content-length'] = String(bytes.length);
    const agent = r.keepAlive ? keepAliveAgent : false;
    const req = http.request({ host: '127.0.0.1', port, method: r.method, path: r.path, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => finish(() => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(chunks) })));
      res.on('error', (err) => finish(() => reject(new Error(`response error: ${err.message}`))));
      res.on('aborted', () => finish(() => reject(new Error('response aborted by the server'))));
    });
    const timer = setTimeout(() => {
      finish(() => reject(new Error(`no answer within ${CLIENT_TIMEOUT_MS} ms`)));
      req.destroy();
    }, CLIENT_TIMEOUT_MS);
    req.on('error', (err) => {
      const code = (err as NodeJS.ErrnoException).code;
      finish(() => reject(Object.assign(new Error(`socket error before an answer: ${code ?? ''} ${err.message}`), { code })));
    });
    if (bytes.length === 0) {
      req.end();
    } else if (chunked) {
      const size = Math.ceil(bytes.length / r.chunks);
      for (let at = 0; at < bytes.length; at += size) req.write(bytes.subarray(at, at + size));
      req.end();
    } else {
      req.end(bytes);
    }
  });
}

// ---------------------------------------------------------------------------------------------
// What the answer must be, from the bytes sent

type PathClass =
  /** /rpc/<chain> or /confirmations/<n>/rpc/<chain> (segments as sent): the pipeline must answer */
  | { kind: 'rpc'; chain: string; n: string | undefined }
  /** looks like an RPC route but with a trailing slash or an empty segment: the pipeline or the app's 404 */
  | { kind: 'rpc-maybe'; n: string | undefined }
  | { kind: 'service' }
  | { kind: 'other' };

function classifyPath(path: string): PathClass {
  if (path.includes('#')) return { kind: 'other' };
  const q = path.indexOf('?');
  const pathname = q === -1 ? path : path.slice(0, q);
  const exact = /^\/(?:confirmations\/([^/]+)\/)?rpc\/([^/]+)$/.exec(pathname);
  if (exact) return { kind: 'rpc', chain: exact[2]!, n: exact[1] };
  const loose = /^\/(?:confirmations\/([^/]*)\/)?rpc\/([^/]*)\/?$/.exec(pathname);
  if (loose) return { kind: 'rpc-maybe', n: loose[1] };
  if (['/health', '/chains', '/collection.json'].includes(pathname)) return { kind: 'service' };
  return { kind: 'other' };
}

const USABLE_UPSTREAMS = 3;
const CONFIGURED_CHAIN = 1n;

/**
 * lib/pipeline/README.md "Errors" for the route: -32009 a chain id that is not a non-negative decimal integer,
 * -32001 an unknown chain, -32002 an <n> that is not a positive decimal integer, -32003 an <n>
 * above the usable upstreams (only for a confirmable request: `nAbove`). Undefined for
 * percent-encoded segments (whether they are decoded is not documented).
 */
function routeProblems(chain: string, n: string | undefined): { codes: number[]; nAbove: boolean } | undefined {
  if (chain.includes('%') || n?.includes('%')) return undefined;
  const codes: number[] = [];
  if (!/^\d+$/.test(chain)) codes.push(-32009);
  else if (BigInt(chain) !== CONFIGURED_CHAIN) codes.push(-32001);
  let nAbove = false;
  if (n !== undefined) {
    if (!/^\d+$/.test(n) || BigInt(n) === 0n) codes.push(-32002);
    else if (BigInt(n) > BigInt(USABLE_UPSTREAMS)) nAbove = true;
  }
  return { codes, nAbove };
}

const safeDecode = (segment: string) => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
};
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isRpcId = (v: unknown): v is string | number => typeof v === 'string' || (typeof v === 'number' && Number.isSafeInteger(v));
const hasBom = (b: Buffer) => b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf;
const isValidUtf8 = (b: Buffer) => Buffer.from(b.toString('utf8'), 'utf8').equals(b);

/** limits.jsonDepth (config/README.md): bodies nesting arrays and objects deeper than limits.jsonDepth (256) get -32600. */
const JSON_DEPTH = 256;
/** The deepest nesting of brackets and braces outside strings in a text, valid JSON or not. */
function depthOf(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
    } else if (c === '[' || c === '{') deepest = Math.max(deepest, ++depth);
    else if (c === ']' || c === '}') depth--;
  }
  return deepest;
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** The request as a server reading the bytes as UTF-8 (dropping a BOM) sees it. */
function readRequest(bytes: Buffer) {
  return tryParse((hasBom(bytes) ? bytes.subarray(3) : bytes).toString('utf8'));
}

/** Ids an error answer may carry: the client's id when a single object's id is readable, else null. */
function expectedIds(bytes: Buffer): unknown[] {
  const ids = new Set<unknown>();
  // (the text without its BOM: the same text when there is none, parsed once)
  for (const text of hasBom(bytes) ? [bytes.toString('utf8'), bytes.subarray(3).toString('utf8')] : [bytes.toString('utf8')]) {
    const parsed = tryParse(text);
    ids.add(parsed.ok && isObject(parsed.value) && isRpcId(parsed.value.id) ? parsed.value.id : null);
  }
  // a strict UTF-8 decoder may refuse the bytes (-32700, id null)
  if (!isValidUtf8(bytes) || hasBom(bytes)) ids.add(null);
  // refused for its depth before parsing: the id is read from the raw text, when it can be
  const text = bytes.toString('utf8');
  if (depthOf(text) > JSON_DEPTH) {
    ids.add(null);
    const id = /^\s*\{\s*"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)/.exec(text)?.[1] ?? /"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)/.exec(text)?.[1];
    const parsedId = id === undefined ? undefined : tryParse(id);
    if (parsedId?.ok && isRpcId(parsedId.value)) ids.add(parsedId.value);
  }
  return [...ids];
}

/** lib/pipeline/README.md "Errors", -32600: is this a JSON-RPC request object? ('unclear' where the README is silent.) */
function structure(v: unknown): 'valid' | 'invalid' | 'unclear' {
  if (!isObject(v)) return 'invalid';
  if (!('id' in v) || !isRpcId(v.id)) return 'invalid';
  if (v.jsonrpc !== '2.0') return 'invalid';
  if (typeof v.method !== 'string') return 'invalid';
  if (v.params !== undefined && v.params !== null && !Array.isArray(v.params)) return 'invalid';
  if (v.method === '' || v.params === null) return 'unclear';
  return 'valid';
}

/** A batch member without an id that is otherwise a valid call: a notification, never answered. */
function isNotification(v: unknown): boolean {
  return isObject(v) && !('id' in v) && v.jsonrpc === '2.0' && typeof v.method === 'string' && v.method !== '' && (v.params === undefined || Array.isArray(v.params));
}

/** HTTP status of each documented code (lib/pipeline/README.md "Errors"). */
const statusOfCode: Record<number, number> = {
  [-32700]: 400, [-32600]: 400, [-32601]: 200, [-32602]: 200, [-32002]: 400, [-32003]: 400, [-32007]: 400, [-32009]: 400,
  [-32001]: 404, [-32004]: 405, [-32006]: 413, [-32010]: 502, [-32011]: 502, [-32012]: 504,
};

/**
 * What the body alone calls for (lib/pipeline/README.md "Errors"): `codes` it may be refused with, and whether it
 * may succeed at all (a structurally valid request or batch). Undefined where the README is
 * silent (invalid UTF-8, a BOM, an empty method, null params).
 */
function bodyExpectation(bytes: Buffer): { success: boolean; codes: number[] } | undefined {
  if (!isValidUtf8(bytes) || hasBom(bytes)) return undefined;
  const parsed = tryParse(bytes.toString('utf8'));
  // refused before parsing: -32600 (the id echoed when readable), or -32700 when cut short
  // a batch over the limit is refused as such before parsing, whatever follows its first elements
  const batchLike = /^\s*\[/.test(bytes.toString('utf8')) ? [-32007] : [];
  if (depthOf(bytes.toString('utf8')) > JSON_DEPTH) return { success: false, codes: [-32600, -32700, ...batchLike] };
  if (!parsed.ok) return { success: false, codes: [-32700, ...batchLike] };
  const v = parsed.value;
  // eth_subscribe and eth_unsubscribe: -32601, whatever their params
  const refused = isObject(v) && (v.method === 'eth_subscribe' || v.method === 'eth_unsubscribe') ? [-32601] : [];
  const valid = { success: true, codes: [-32602, -32010, -32011, -32012, ...refused] };
  if (Array.isArray(v)) {
    if (v.length === 0) return { success: false, codes: [-32600] };
    if (v.length > BATCH_LIMIT) return { success: false, codes: [-32007, -32600] };
    // Answered per member (issue 25): a 200 array whatever its members (204 when all are notifications).
    return { success: true, codes: [] };
  }
  const verdict = structure(v);
  if (verdict === 'invalid') return { success: false, codes: [-32600] };
  return verdict === 'unclear' ? undefined : valid;
}

/** Body and route together: the codes allowed, and whether a 200 is. Undefined: not documented. */
function expectation(bytes: Buffer, chain: string, n: string | undefined): { success: boolean; codes: Set<number> } | undefined {
  const body = bodyExpectation(bytes);
  const route = routeProblems(chain, n);
  if (!body || !route) return undefined;
  const above = route.nAbove ? [-32003] : [];
  if (!body.success) return { success: false, codes: new Set([...body.codes, ...route.codes, ...above]) };
  // a request that is fine in itself: the route's problems (or the params', found once the chain is known)
  if (route.codes.length > 0) return { success: false, codes: new Set([...route.codes, ...above, -32602]) };
  return { success: true, codes: new Set([...body.codes, ...above]) };
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The X-Request-Id the server receives (values joined, surrounding blanks trimmed), if valid. */
function echoedRequestId(sent: string | string[] | undefined): string | undefined {
  if (sent === undefined) return undefined;
  const joined = (Array.isArray(sent) ? sent.join(', ') : sent).replace(/^[ \t]+|[ \t]+$/g, '');
  return /^[\x21-\x7e]{1,200}$/.test(joined) ? joined : undefined;
}

function checkRequestId(r: FuzzRequest, a: Answer, problems: string[]): void {
  const got = a.headers['x-request-id'];
  const want = echoedRequestId(r.headers['x-request-id']);
  if (typeof got !== 'string') problems.push(`X-Request-Id missing (got ${JSON.stringify(got)})`);
  else if (want !== undefined && got !== want) problems.push(`X-Request-Id ${JSON.stringify(got)}, expected the client's ${JSON.stringify(want)}`);
  else if (want === undefined && !uuid.test(got)) problems.push(`X-Request-Id ${JSON.stringify(got)}: expected a random UUID (the client's was not 1–200 visible ASCII chars)`);
}

function checkErrorBody(body: unknown, status: number, ids: unknown[], problems: string[]): void {
  if (!isObject(body)) return void problems.push('error body is not a JSON object');
  if (body.jsonrpc !== '2.0') problems.push(`jsonrpc is ${JSON.stringify(body.jsonrpc)}`);
  if (!('id' in body)) problems.push('no id in the error');
  else if (!ids.some((id) => id === body.id)) problems.push(`id ${JSON.stringify(body.id)}, expected one of ${JSON.stringify(ids)}`);
  if ('result' in body) problems.push('an error answer with a result');
  const error = body.error;
  if (!isObject(error)) return void problems.push('no error object');
  if (!Number.isInteger(error.code)) problems.push(`error.code ${JSON.stringify(error.code)} is not an integer`);
  if (typeof error.message !== 'string') problems.push('error.message is not a string');
  const allowed = codesByStatus[status];
  if (allowed && !allowed.includes(error.code as number)) problems.push(`code ${String(error.code)} with HTTP ${status} (README: ${allowed.join(', ')})`);
  if ([-32010, -32011, -32012].includes(error.code as number) && !isObject(error.data)) problems.push(`code ${String(error.code)} without a data object`);
}

function checkResponseObject(v: unknown, id: unknown, where: string, problems: string[]): void {
  if (!isObject(v)) return void problems.push(`${where} is not a JSON object`);
  if (v.jsonrpc !== '2.0') problems.push(`${where}.jsonrpc is ${JSON.stringify(v.jsonrpc)}`);
  if (v.id !== id) problems.push(`${where}.id ${JSON.stringify(v.id)}, the request's was ${JSON.stringify(id)}`);
  if (('result' in v) === ('error' in v)) problems.push(`${where} must have exactly one of result and error`);
  if ('error' in v) {
    const e = v.error;
    if (!isObject(e) || !Number.isInteger(e.code) || typeof e.message !== 'string') problems.push(`${where}.error is not {code:int, message:string}`);
  }
}

/** A code omnigate answers with itself (JSON-RPC's -32600…-32602, its own -32001…-32099 but the nodes' -32005). */
function isGatewayCode(code: unknown): boolean {
  return typeof code === 'number' && ((code >= -32602 && code <= -32600) || (code >= -32099 && code <= -32001 && code !== -32005));
}

/** A single error answered with 200 by omnigate itself (no upstream named), not a node's relayed error. */
function isOwnError(body: unknown, a: Answer): boolean {
  return isObject(body) && 'error' in body && a.headers['x-forwarded-from'] === undefined;
}

/** A 200: the JSON-RPC answer(s) to what was sent, with the success headers. */
function checkSuccess(r: FuzzRequest, a: Answer, body: unknown, n: string | undefined, problems: string[]): void {
  const request = readRequest(r.body.bytes);
  if (!request.ok) return void problems.push('HTTP 200 for a body that is not JSON');
  const sent = request.value;
  if (Array.isArray(sent)) {
    // One response per member that is not a notification, in order, each with its own id (null
    // when the member had no valid one).
    if (!Array.isArray(body)) return void problems.push('a batch answered by a non-array');
    const answered = sent.filter((m) => !isNotification(m));
    if (body.length !== answered.length) problems.push(`batch of ${answered.length} calls answered with ${body.length} members`);
    const want = answered.map((m) => (isObject(m) && isRpcId(m.id) ? m.id : null));
    const got = body.map((m) => (isObject(m) ? m.id : undefined));
    if (JSON.stringify(want) !== JSON.stringify(got)) problems.push(`batch answer ids ${JSON.stringify(got)} do not match the request's ${JSON.stringify(want)}`);
    body.forEach((m, i) => checkResponseObject(m, want[i], `answer[${i}]`, problems));
    // The headers of a batch (spec B2, lib/jsonrpc/README.md "Batches"): X-Confirmable true only when every
    // member was confirmed by N; X-Required-Confirmations N then, and 1 whenever X-Confirmable is false.
    const confirmable = a.headers['x-confirmable'];
    const wantN = n === undefined ? CHAIN_CONFIRMATIONS : Number(safeDecode(n));
    const required = Number(a.headers['x-required-confirmations']);
    if (confirmable !== 'true' && confirmable !== 'false') problems.push(`X-Confirmable is ${JSON.stringify(confirmable)}`);
    if (required !== (confirmable === 'true' ? wantN : 1)) problems.push(`X-Required-Confirmations ${required} (confirmable: ${confirmable})`);
    // (a member omnigate refused or could not confirm has one of its own codes; a node's revert that N agreed on may be confirmed)
    if (confirmable === 'true' && body.some((m) => isObject(m) && isObject(m.error) && isGatewayCode(m.error.code))) problems.push('X-Confirmable true with a refused member');
    const checked = String(a.headers['x-checked-urls'] ?? '').split(',').filter(Boolean);
    if (confirmable === 'true' && checked.length < wantN) problems.push(`X-Checked-URLS lists ${checked.length} upstreams, expected at least ${wantN}`);
    if (!/^[0-9a-f]{64}$/.test(String(a.headers['x-json-hash']))) problems.push(`X-Json-Hash ${JSON.stringify(a.headers['x-json-hash'])}`);
    if (typeof a.headers['x-forwarded-from'] !== 'string') problems.push('X-Forwarded-From missing');
    return;
  } else if (isObject(sent)) {
    if (!isRpcId(sent.id)) problems.push(`HTTP 200 for a request whose id ${JSON.stringify(sent.id)} is not a string or safe integer`);
    checkResponseObject(body, sent.id, 'answer', problems);
    if (isOwnError(body, a)) {
      // omnigate's own error that a node sends itself (-32602, -32601), with 200 as a node does:
      // no upstream's answer, not confirmed
      checkErrorBody(body, 200, [sent.id], problems);
      if (a.headers['x-confirmable'] !== 'false' || a.headers['x-required-confirmations'] !== '1') problems.push(`a 200 error of omnigate with X-Confirmable ${String(a.headers['x-confirmable'])}, X-Required-Confirmations ${String(a.headers['x-required-confirmations'])}`);
      return;
    }
  } else {
    problems.push(`HTTP 200 for a body that is neither an object nor a batch (${typeof sent})`);
  }
  const confirmable = a.headers['x-confirmable'];
  const required = a.headers['x-required-confirmations'];
  if (confirmable !== 'true' && confirmable !== 'false') problems.push(`X-Confirmable is ${JSON.stringify(confirmable)}`);
  const wantN = confirmable === 'true' ? (n === undefined ? CHAIN_CONFIRMATIONS : Number(safeDecode(n))) : 1;
  if (required !== String(wantN)) problems.push(`X-Required-Confirmations ${JSON.stringify(required)}, expected ${wantN} (confirmable: ${confirmable})`);
  const checked = String(a.headers['x-checked-urls'] ?? '').split(',').filter(Boolean);
  if (checked.length !== wantN) problems.push(`X-Checked-URLS lists ${checked.length} upstreams, expected ${wantN}`);
  if (!/^[0-9a-f]{64}$/.test(String(a.headers['x-json-hash']))) problems.push(`X-Json-Hash ${JSON.stringify(a.headers['x-json-hash'])}`);
  if (typeof a.headers['x-forwarded-from'] !== 'string') problems.push('X-Forwarded-From missing');
}

const isAppNotFound = (a: Answer) => a.status === 404 && String(a.headers['content-type'] ?? '').startsWith('text/html');

/**
 * A request line with bytes outside visible ASCII is not HTTP (RFC 9112): Node's parser refuses it
 * before any handler runs, nothing the pipeline (or its host app) sees. The server's default
 * clientError handling answers a bare 400 and destroys the socket: with a body still unread there
 * (seen on Node 26 with a 208 KB body) the client may meet a reset instead of the 400.
 */
const refusedRequestLine = (r: FuzzRequest) => /[^\x21-\x7e]/.test(r.path);

/** The connection reset under the client (read or write side): for refusedRequestLine only. */
const isReset = (err: unknown) => ['ECONNRESET', 'EPIPE'].includes(String((err as NodeJS.ErrnoException).code));

/** Every problem with one answer (empty: fine). */
function judge(r: FuzzRequest, a: Answer): string[] {
  const problems: string[] = [];
  const method = r.method.toUpperCase();
  const where = classifyPath(r.path);
  const text = a.bytes.toString('utf8');
  const parsed = tryParse(text);
  const jsonType = a.headers['content-type'] === 'application/json';

  // Node's parser refuses the request line: a bare 400 (see refusedRequestLine).
  if (refusedRequestLine(r) && a.status === 400 && a.bytes.length === 0 && a.headers['content-type'] === undefined) return problems;

  if (a.status >= 500 && a.status !== 502 && a.status !== 504) problems.push(`HTTP ${a.status}`);
  if (!documentedStatuses.has(a.status)) problems.push(`HTTP ${a.status} is not a documented status`);

  if (where.kind === 'other' || (where.kind === 'rpc-maybe' && isAppNotFound(a))) {
    // not the pipeline's path: the host app's own 404 (or a route of the pipeline); never a 5xx
    if (jsonType && method !== 'HEAD' && !parsed.ok) problems.push('Content-Type application/json but the body is not JSON');
    if (jsonType && parsed.ok && isObject(parsed.value) && 'error' in parsed.value) {
      const ids = method === 'POST' && r.body.bytes.length <= BODY_LIMIT ? [...expectedIds(r.body.bytes), null] : [null];
      checkErrorBody(parsed.value, a.status, ids, problems);
    }
    if (!jsonType && !isAppNotFound(a) && a.status !== 200 && a.status !== 204) problems.push(`HTTP ${a.status} with Content-Type ${String(a.headers['content-type'])} on a non-RPC path`);
    return problems;
  }

  if (where.kind === 'service') {
    if (method === 'GET') {
      if (a.status !== 200) problems.push(`GET ${r.path}: HTTP ${a.status}`);
      if (!jsonType || !parsed.ok) problems.push(`GET ${r.path}: not a JSON answer`);
    } else if (method === 'HEAD') {
      if (a.status !== 200 && a.status !== 405) problems.push(`HEAD ${r.path}: HTTP ${a.status}`);
    } else {
      if (a.status !== 405) problems.push(`${method} ${r.path}: HTTP ${a.status}, expected 405`);
      if (!jsonType || !parsed.ok) problems.push(`${method} ${r.path}: the 405 is not a JSON answer`);
      else checkErrorBody(parsed.value, a.status, [null], problems);
    }
    return problems;
  }

  // An RPC route: the pipeline answers.
  if (method === 'OPTIONS') {
    if (a.status !== 204) problems.push(`OPTIONS: HTTP ${a.status}, expected 204`);
    if (a.bytes.length > 0) problems.push('OPTIONS: a 204 with a body');
    return problems;
  }
  checkRequestId(r, a, problems);
  if (method !== 'POST') {
    if (a.status !== 405) problems.push(`${method}: HTTP ${a.status}, expected 405`);
    if (!String(a.headers.allow ?? '').includes('POST')) problems.push(`${method}: Allow is ${JSON.stringify(a.headers.allow)}`);
    if (method === 'HEAD') return problems;
    if (!jsonType) problems.push(`Content-Type ${JSON.stringify(a.headers['content-type'])}`);
    if (!parsed.ok) return [...problems, 'the body is not JSON'];
    checkErrorBody(parsed.value, a.status, [null], problems);
    return problems;
  }
  if (a.status === 204) {
    // JSON-RPC 2.0: a batch of notifications only gets nothing back.
    const request = readRequest(r.body.bytes);
    if (!request.ok || !Array.isArray(request.value) || !request.value.every(isNotification)) problems.push('HTTP 204 for a body that is not a batch of notifications');
    if (a.bytes.length > 0) problems.push('a 204 with a body');
    return problems;
  }
  if (!jsonType) problems.push(`Content-Type ${JSON.stringify(a.headers['content-type'])}`);
  if (!parsed.ok) return [...problems, 'the body is not JSON'];
  // A body sent compressed (any Content-Encoding but identity) is refused before it is read, whatever its size: 415.
  const encoding = r.headers['content-encoding'];
  if (encoding !== undefined && String(encoding).trim().toLowerCase() !== 'identity') {
    if (a.status !== 415) problems.push(`Content-Encoding ${String(encoding)}: HTTP ${a.status}, expected 415`);
    if (a.headers['accept-encoding'] !== 'identity') problems.push(`Content-Encoding ${String(encoding)}: Accept-Encoding ${String(a.headers['accept-encoding'])}, expected identity`);
    checkErrorBody(parsed.value, a.status, [null], problems);
    if (isObject(parsed.value) && isObject(parsed.value.error) && parsed.value.error.code !== -32700) problems.push(`Content-Encoding ${String(encoding)}: code ${String(parsed.value.error.code)}, expected -32700`);
    return problems;
  }
  if (r.body.bytes.length > BODY_LIMIT) {
    if (a.status !== 413) problems.push(`a ${r.body.bytes.length}-byte body: HTTP ${a.status}, expected 413`);
    checkErrorBody(parsed.value, a.status, [null], problems);
    return problems;
  }
  if (a.status === 200) {
    checkSuccess(r, a, parsed.value, where.n, problems);
  } else {
    if (![400, 404, 502, 504].includes(a.status)) problems.push(`HTTP ${a.status} for a POST within the body limit`);
    checkErrorBody(parsed.value, a.status, expectedIds(r.body.bytes), problems);
  }
  if (where.kind === 'rpc') {
    const want = expectation(r.body.bytes, where.chain, where.n);
    if (want) stats.checkedAgainstReadme += 1;
    const code = isObject(parsed.value) && isObject(parsed.value.error) ? parsed.value.error.code : undefined;
    const own = a.status === 200 && isOwnError(parsed.value, a);
    if (want && a.status === 200 && !own && !want.success) problems.push(`HTTP 200, expected an error with code ${[...want.codes].join(' or ')}`);
    if (want && (a.status !== 200 || own)) {
      if (!want.codes.has(code as number)) problems.push(`code ${String(code)}, expected ${want.success ? 'a success or ' : ''}${[...want.codes].join(' or ')}`);
      else if (statusOfCode[code as number] !== a.status) problems.push(`code ${String(code)} with HTTP ${a.status}`);
    }
  }
  return problems;
}

function describe(r: FuzzRequest, a?: Answer): string {
  const b = r.body.bytes;
  const shown = isValidUtf8(b) ? JSON.stringify(b.toString('utf8').slice(0, 1500)) : `hex ${b.subarray(0, 750).toString('hex')}`;
  const lines = [
    `${r.method} ${r.path}  headers ${JSON.stringify(r.headers)}  chunks ${r.chunks}  keepAlive ${r.keepAlive}`,
    `body (${r.body.kind}, ${b.length} bytes): ${shown}${b.length > 1500 ? '…' : ''}`,
  ];
  if (a) lines.push(`answer: HTTP ${a.status} ${JSON.stringify(a.headers)}\n  ${a.bytes.toString('utf8').slice(0, 1500)}`);
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------

const stats = { requests: 0, checkedAgainstReadme: 0, byStatus: new Map<number | 'reset', number>(), byKind: new Map<string, number>() };
const upstreamCalls = () => fakes.reduce((n, f) => n + f.calls, 0);
const bump = <K>(m: Map<K, number>, k: K) => m.set(k, (m.get(k) ?? 0) + 1);

async function exercise(r: FuzzRequest, sequential: boolean): Promise<void> {
  stats.requests += 1;
  bump(stats.byKind, r.body.kind);
  const before = upstreamCalls();
  let a: Answer;
  try {
    a = await send(r);
  } catch (err) {
    if (refusedRequestLine(r) && isReset(err)) {
      bump(stats.byStatus, 'reset');
      const called = upstreamCalls() - before;
      if (sequential && called > 0) throw new Error(`reset, yet ${called} upstream call(s) were made\n${describe(r)}`);
      return;
    }
    throw new Error(`${(err as Error).message}\n${describe(r)}`);
  }
  bump(stats.byStatus, a.status);
  const problems = judge(r, a);
  // one request at a time: a refused request must not have reached any upstream (lib/pipeline/README.md, -32602)
  const called = upstreamCalls() - before;
  if (sequential && a.status !== 200 && a.status < 500 && called > 0) problems.push(`HTTP ${a.status}, yet ${called} upstream call(s) were made`);
  if (problems.length > 0) throw new Error(`${problems.join('; ')}\n${describe(r, a)}`);
}

// fast-check prints counterexamples with this (bodies shown as text, not as byte arrays)
const printable = fuzzRequest.map((r) => Object.assign(r, { [fc.toStringMethod]: () => describe(r) }));

/**
 * Runs `runs` property runs of `size` requests each (sent at once when size > 1), then logs what
 * was sent and fails with the (shrunk) counterexample, if any.
 */
async function fuzz(t: ExecutionContext, seed: number, runs: number, size: number): Promise<void> {
  t.timeout(600_000);
  const sentBefore = stats.requests;
  const errorsBefore = errorLogs.length;
  const started = performance.now();
  const result = await fc.check(
    fc.asyncProperty(fc.array(printable, { minLength: size, maxLength: size }), async (requests) => {
      // every member of a burst is judged; the first problem is reported
      const outcomes = await Promise.allSettled(requests.map((r) => exercise(r, size === 1)));
      const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
      if (failed) throw failed.reason;
    }),
    { seed, numRuns: runs, endOnFailure: process.env.FUZZ_SHRINK === '0' },
  );
  const sent = stats.requests - sentBefore;
  t.log(`seed ${seed}: ${sent} requests in ${((performance.now() - started) / 1000).toFixed(1)} s (${runs} runs of ${size})`);
  t.log(`answers checked against the README's code table so far: ${stats.checkedAgainstReadme}`);
  t.log(`statuses so far: ${JSON.stringify(Object.fromEntries([...stats.byStatus].sort()))}`);
  t.log(`bodies so far: ${JSON.stringify(Object.fromEntries([...stats.byKind].sort()))}`);
  t.log(`upstream calls so far: ${fakes.map((f) => `${f.profile} ${f.calls}`).join(', ')}`);
  const newErrors = errorLogs.slice(errorsBefore) as { obj: { err?: Error }; msg?: string }[];
  for (const e of newErrors.slice(0, 3)) t.log(`logged error: ${String(e.msg)}: ${e.obj.err?.stack?.split('\n').slice(0, 3).join(' | ') ?? ''}`);
  if (result.failed) {
    const error = result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance);
    t.log(`counterexample (seed ${result.seed}, path "${String(result.counterexamplePath)}", shrunk ${result.numShrinks} times):\n${error}`);
    t.fail(`property failed after ${result.numRuns} runs (seed ${result.seed}): ${error.split('\n')[0]}`);
    return;
  }
  t.true(sent >= runs * size, `only ${sent} requests were sent`);
  t.is(newErrors.length, 0, 'no unexpected (internal) errors were logged');
}

test.serial(`should answer ${RUNS} generated malformed requests, one at a time, with well-formed JSON-RPC (seed ${SEED})`, async (t) => {
  await fuzz(t, SEED, RUNS, 1);
});

test.serial(`should answer ${BURST_RUNS * BURST_SIZE} more in bursts of ${BURST_SIZE} concurrent requests (seed ${SEED + 1})`, async (t) => {
  await fuzz(t, SEED + 1, BURST_RUNS, BURST_SIZE);
  t.log(`total: ${stats.requests} generated requests`);
});

test.serial('should still answer normal requests afterwards, with the fakes alive', async (t) => {
  const plain = await gw.post('/rpc/1', rpc('eth_blockNumber', [], 'after-1'));
  t.is(plain.status, 200, plain.text);
  t.deepEqual(plain.body, { jsonrpc: '2.0', id: 'after-1', result: '0x10' });

  const pinned = await gw.post('/rpc/1', rpc('eth_getBalance', ['0x1111111111111111111111111111111111111111', '0x10'], 'after-2'));
  t.is(pinned.status, 200, pinned.text);
  t.is(pinned.body.id, 'after-2');
  t.is(pinned.headers['x-confirmable'], 'true');
  t.is(pinned.headers['x-required-confirmations'], String(CHAIN_CONFIRMATIONS));

  for (const fake of fakes) {
    const alive = await new Promise<number>((resolve, reject) => {
      const req = http.request(fake.url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.end(JSON.stringify(rpc('eth_blockNumber', [], 'direct')));
    });
    t.is(alive, 200, `${fake.profile} fake answers`);
  }
});

