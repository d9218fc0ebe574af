/**
 * Fake JSON-RPC upstreams on real sockets (HTTP and WebSocket), with named profiles, in the
 * spirit of erpc's fake_server: `honest` (compact JSON), `pretty` (indented), `reordered`
 * (keys in reverse order), `extras` (fields of the default ignore list added: totalDifficulty, chainId, yParity), `liar` (a different answer),
 * `error500` (HTML with HTTP 500), `hang` (never answers), and a `delayMs` for any profile; `http`
 * answers chosen requests with another HTTP status (a 429 with Retry-After); `hold` keeps an
 * HTTP fake's answers until a promise of the test's settles.
 * Each fake counts the calls it received, so tests can assert how many upstreams were asked.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';

export type Profile = 'honest' | 'pretty' | 'reordered' | 'extras' | 'liar' | 'error500' | 'hang';

export interface RpcCallIn {
  jsonrpc?: string;
  id: unknown;
  method: string;
  params?: unknown[];
}

export type AnswerFn = (call: RpcCallIn) => { result: unknown } | { error: { code: number; message: string; data?: unknown } };

export interface FakeOptions {
  profile?: Profile;
  delayMs?: number;
  answer?: AnswerFn;
  /** Path the fake serves (any other path gets 404), e.g. '/v2/KEY'. */
  path?: string;
  /** The whole response text for a single call, as written (numbers, duplicate keys…; bytes: not even UTF-8), instead of `answer`. */
  raw?: (call: RpcCallIn) => string | Buffer;
  /** Answer a batch with `raw`'s text for each member too, joined in an array (default: `answer`). */
  rawBatch?: boolean;
  /** Port to listen on (default: a free one), e.g. the port of a `deadUrl()` that comes back. */
  port?: number;
  /** Asked for every request (its parsed body, HTTP fakes): true to never answer it, as the `hang` profile (its connection closed by the client or by close()). */
  hangIf?: (body: unknown) => boolean;
  /** Asked for every request (its parsed body): an HTTP answer to give instead (e.g. 429 with Retry-After), or undefined for the usual one. */
  http?: (body: unknown) => { status: number; headers?: Record<string, string>; body?: string } | undefined;
  /**
   * HTTP only: asked for each request (its parsed body); the answer waits until the promise it
   * returns settles (then `delayMs`), so that a test holds calls in flight until what it checks
   * has happened, not for a time. Undefined: no wait.
   */
  hold?: (body: unknown) => Promise<unknown> | undefined;
}

export interface FakeUpstream {
  url: string;
  /** HTTP requests (or ws messages) received. */
  calls: number;
  /** Every request received: headers, parsed body, and when it arrived (performance.now(), ms). */
  requests: { headers: http.IncomingHttpHeaders; body: unknown; path: string; at: number }[];
  /** Calls whose connection the gateway closed before the fake answered. */
  aborted: number;
  profile: Profile;
  delayMs: number;
  close(): Promise<void>;
}

/** A deterministic chain: the same call always gets the same answer. */
export const defaultAnswer: AnswerFn = (call) => {
  const p = call.params ?? [];
  switch (call.method) {
    case 'eth_chainId':
      return { result: '0x539' };
    case 'eth_blockNumber':
      return { result: '0x10' };
    case 'eth_getBalance':
      return { result: `0x${(BigInt(1e18) + BigInt(String(p[0] ?? '0').length)).toString(16)}` };
    case 'eth_getBlockByNumber':
      return { result: block(String(p[0]), p[1] === true) };
    case 'eth_call':
      return { error: { code: 3, message: 'execution reverted: nope', data: '0x08c379a0' } };
    case 'eth_getLogs':
      return { result: [log(1), log(2)] };
    default:
      return { result: `${call.method}:${JSON.stringify(p)}` };
  }
};

export function block(number: string, full: boolean) {
  const n = number.startsWith('0x') ? number : '0x1';
  const hash = `0x${'ab'.repeat(31)}${n.slice(2).padStart(2, '0').slice(-2)}`;
  return {
    number: n,
    hash,
    parentHash: `0x${'cd'.repeat(32)}`,
    miner: '0x00000000000000000000000000000000000000AA',
    timestamp: '0x6553f100',
    gasLimit: '0x1c9c380',
    gasUsed: '0x5208',
    transactions: full
      ? [{ hash: `0x${'ef'.repeat(32)}`, from: '0x1111111111111111111111111111111111111111', to: null, value: '0x1', blockNumber: n, blockHash: hash }]
      : [`0x${'ef'.repeat(32)}`],
    uncles: [],
  };
}

export function log(i: number) {
  return {
    address: '0x5523d3c98809dddb82c686e152f5c58b1b0fb59e',
    topics: [`0x${'12'.repeat(32)}`, `0x${i.toString(16).padStart(64, '0')}`],
    data: `0x${'00'.repeat(63)}${(i % 256).toString(16).padStart(2, '0')}`,
    blockNumber: '0x1312d00',
    blockHash: `0x${'34'.repeat(32)}`,
    transactionHash: `0x${i.toString(16).padStart(64, '5')}`,
    transactionIndex: '0x0',
    logIndex: `0x${i.toString(16)}`,
    removed: false,
  };
}

function reorder(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reorder);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).reverse().map(([k, v]) => [k, reorder(v)]));
  }
  return value;
}

/** Fields of the default ignore list, as one node client adds them: totalDifficulty on a block, chainId and yParity on its transactions. */
function addExtras(result: unknown): unknown {
  if (Array.isArray(result)) return result.map(addExtras);
  if (result !== null && typeof result === 'object' && 'parentHash' in result) {
    const block = result as { transactions?: unknown[] };
    const transactions = block.transactions?.map((tx) => (tx !== null && typeof tx === 'object' ? { ...tx, chainId: '0x539', yParity: '0x1' } : tx));
    return { ...result, totalDifficulty: '0x1', ...(transactions && { transactions }) };
  }
  return result;
}

function lie(answer: ReturnType<AnswerFn>): ReturnType<AnswerFn> {
  if ('error' in answer) return { result: '0xdead' };
  return { result: typeof answer.result === 'string' ? `${answer.result}ff` : { lie: true, was: answer.result } };
}

/** Serializes one response (or a batch) as the profile does. */
export function render(profile: Profile, body: unknown, answer: AnswerFn): string {
  const respond = (call: RpcCallIn) => {
    let a = answer(call);
    if (profile === 'liar') a = lie(a);
    if (profile === 'extras' && 'result' in a) a = { result: addExtras(a.result) };
    return { jsonrpc: '2.0', id: call.id, ...a };
  };
  const out = Array.isArray(body) ? body.map((c) => respond(c as RpcCallIn)) : respond(body as RpcCallIn);
  if (profile === 'pretty') return JSON.stringify(out, null, 2);
  if (profile === 'reordered') return JSON.stringify(reorder(out), null, ' ');
  return JSON.stringify(out);
}

function newFake(options: FakeOptions): FakeUpstream {
  return { url: '', calls: 0, requests: [], aborted: 0, profile: options.profile ?? 'honest', delayMs: options.delayMs ?? 0, close: async () => {} };
}

export async function startFakeUpstream(options: FakeOptions = {}): Promise<FakeUpstream> {
  const answer = options.answer ?? defaultAnswer;
  const sockets = new Set<import('node:net').Socket>();
  const fake = newFake(options);
  const server = http.createServer((req, res) => {
    const at = performance.now();
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      fake.calls += 1;
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = undefined;
      }
      fake.requests.push({ headers: req.headers, body, path: req.url ?? '', at });
      if (options.path && req.url !== options.path) {
        res.writeHead(404).end('not found');
        return;
      }
      let answered = false;
      res.on('close', () => {
        if (!answered) fake.aborted += 1;
      });
      if (fake.profile === 'hang' || options.hangIf?.(body)) return;
      const send = () => {
        answered = true;
        if (res.destroyed) return;
        const instead = options.http?.(body);
        if (instead) {
          res.writeHead(instead.status, { 'content-type': 'application/json', ...instead.headers }).end(instead.body ?? '');
          return;
        }
        if (fake.profile === 'error500') {
          res.writeHead(500, { 'content-type': 'text/html' }).end('<html><body><h1>500 Internal Server Error</h1></body></html>');
          return;
        }
        const raw = options.raw;
        const text =
          raw && !Array.isArray(body)
            ? raw(body as RpcCallIn)
            : raw && options.rawBatch && Array.isArray(body)
              ? Buffer.concat([Buffer.from('['), ...(body as RpcCallIn[]).flatMap((c, i) => [Buffer.from(i === 0 ? '' : ','), Buffer.from(raw(c))]), Buffer.from(']')])
              : render(fake.profile, body, answer);
        res.writeHead(200, { 'content-type': 'application/json' }).end(text);
      };
      const later = () => (fake.delayMs > 0 ? void setTimeout(send, fake.delayMs) : send());
      const held = options.hold?.(body);
      if (held) void held.then(later, later);
      else later();
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  fake.url = `http://127.0.0.1:${port}${options.path ?? ''}`; // as redactUrl names it (no key: unchanged)
  fake.close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  return fake;
}

/** A WebSocket upstream: answers each message (single or batch) with the profile's rendering. */
export async function startFakeWsUpstream(options: FakeOptions = {}): Promise<FakeUpstream> {
  const answer = options.answer ?? defaultAnswer;
  const server = http.createServer((_req, res) => res.writeHead(426).end());
  const wss = new WebSocketServer({ server });
  const fake = newFake(options);
  wss.on('connection', (ws, req) => {
    ws.on('message', (data) => {
      fake.calls += 1;
      const body = JSON.parse(data.toString()) as unknown;
      fake.requests.push({ headers: req.headers, body, path: req.url ?? '', at: performance.now() });
      if (fake.profile === 'hang') return;
      const send = () => ws.send(render(fake.profile, body, answer));
      if (fake.delayMs > 0) setTimeout(send, fake.delayMs);
      else send();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  fake.url = `ws://127.0.0.1:${port}${options.path ?? ''}`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      for (const c of wss.clients) c.terminate();
      wss.close();
      server.close(() => resolve());
    });
  return fake;
}

/** The lowest port the system hands out to a listen on port 0 (Linux: ip_local_port_range; elsewhere, 1024 is below any default range). */
function lowestEphemeralPort(): number {
  try {
    return Math.min(1024, Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]));
  } catch {
    return 1024;
  }
}

/** Whether a connection to 127.0.0.1:`port` is refused (not accepted, and not left unanswered a second). */
function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.setTimeout(1_000, () => (socket.destroy(), resolve(false)));
    socket.once('connect', () => (socket.destroy(), resolve(false)));
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

let nextDeadPort = 1;

/**
 * A URL where nothing listens, another on each call: a port below those the system hands out to
 * a listen on port 0, found refusing connections. No test server can take it later, as one could
 * take a port freed a moment ago: under load, with other tests' servers listening on port 0 in
 * the window before the gateway connected, the "dead" upstream answered.
 */
export async function deadUrl(): Promise<string> {
  for (const below = lowestEphemeralPort(); nextDeadPort < below; ) {
    const port = nextDeadPort++;
    if (await refuses(port)) return `http://127.0.0.1:${port}/`;
  }
  throw new Error('no port below the ephemeral range refuses connections');
}

/**
 * A chain at block `latest` whose `safe` and `finalized` blocks are `finalized()` (read at each
 * call, so a test can move it): eth_blockNumber and eth_getBlockByNumber answer accordingly,
 * everything else as defaultAnswer. The head tracker then knows the chain's finalized block.
 */
export function finalizedChain(finalized: () => number | undefined, latest = 100): AnswerFn {
  const hex = (n: number) => `0x${n.toString(16)}`;
  return (call) => {
    const p = (call.params ?? []) as unknown[];
    if (call.method === 'eth_blockNumber') return { result: hex(latest) };
    if (call.method === 'eth_getBlockByNumber') {
      const tag = String(p[0]);
      const n = tag === 'finalized' || tag === 'safe' ? finalized() : tag === 'latest' ? latest : Number(tag);
      return { result: n === undefined ? null : { number: hex(n), hash: `0x${n.toString(16).padStart(64, '0')}`, parentHash: `0x${'00'.repeat(32)}`, timestamp: '0x1', transactions: [] } };
    }
    return defaultAnswer(call);
  };
}
