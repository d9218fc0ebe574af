/**
 * Bench child: lean fake JSON-RPC upstreams, one per spec, in this process (the bench starts one
 * process per upstream, as each provider is its own machine). Each parses the request (to echo
 * its id and count its method), waits `delayMs` (the fixed service time, timed to a few µs by
 * precise-delay.ts: setTimeout's whole milliseconds would favour some traffic patterns) and
 * answers a precomputed body. Commands: `stats` (calls per port and method), `reset`.
 * argv[2]: JSON array of { chainId, delayMs, smallLogs?, logsPad? } (smallLogs: `eth_getLogs` answers 3 logs,
 * not the 2.5 MB reply; logsPad: that many spaces after the `eth_getLogs` answer, so that nodes
 * send the same answer in bytes that differ).
 *
 * HTTP/1.1 is spoken straight over TCP, not with node:http: the fake stands for a remote node,
 * and its own CPU is not what the bench measures, but it shares a core with the load generator.
 * Measured at 10,000 answers/s on one core, one answer cost its process 49 µs with node:http
 * and 30 µs here. With three calls per N=3 answer, the difference is about 57 µs of that core.
 * It serves what the bench's clients send: keep-alive (HTTP/1.0 or `Connection: close` closes
 * after the answer), pipelining (answers in request order), bodies with Content-Length. A
 * request with Transfer-Encoding, a head over 16 KiB or a malformed head gets an error answer and
 * the connection closes; every answer is one write, head and body together.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { childMain } from './ipc.js';
import { preciseDelay } from './precise-delay.js';
import { resultJson, smallLogsResultJson } from './payloads.js';

interface Spec {
  chainId: number;
  delayMs: number;
  smallLogs?: boolean;
  logsPad?: number;
}

const specs = JSON.parse(process.argv[2] ?? '[]') as Spec[];
const servers: net.Server[] = [];
const sockets = new Set<net.Socket>();
const counts: Record<string, number>[] = specs.map(() => ({}));

const delay = preciseDelay();
const MAX_HEAD = 16 * 1024;
const HEAD_END = Buffer.from('\r\n\r\n');
const BODY_START = Buffer.from('{"jsonrpc":"2.0","id":');

/** The Date header's value, renewed once a second (as node:http does). */
let date = new Date().toUTCString();
setInterval(() => { date = new Date().toUTCString(); }, 1000).unref();

function answer(status: string, body: Buffer | string, close: boolean): Buffer {
  const payload = typeof body === 'string' ? Buffer.from(body) : body;
  const head =
    `HTTP/1.1 ${status}\r\nContent-Type: application/json\r\nDate: ${date}\r\n` +
    (close ? 'Connection: close\r\n' : 'Connection: keep-alive\r\nKeep-Alive: timeout=60\r\n') +
    `Content-Length: ${payload.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), payload]);
}

interface Head {
  method: string;
  contentLength: number;
  close: boolean;
}

/** The request head (without its final CRLF CRLF), or an error status to answer and close with. */
function parseHead(text: string): Head | string {
  const lines = text.split('\r\n');
  const m = /^([A-Z]+) \S+ HTTP\/1\.([01])$/.exec(lines[0]!);
  if (!m) return '400 Bad Request';
  let contentLength = 0;
  let close = m[2] === '0';
  for (let i = 1; i < lines.length; i += 1) {
    const line = lines[i]!;
    const colon = line.indexOf(':');
    if (colon <= 0) return '400 Bad Request';
    const name = line.slice(0, colon).toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === 'content-length') {
      if (!/^\d{1,9}$/.test(value)) return '400 Bad Request';
      contentLength = Number(value);
    } else if (name === 'transfer-encoding') {
      return '501 Not Implemented';
    } else if (name === 'connection') {
      const tokens = value.toLowerCase().split(',').map((t) => t.trim());
      if (tokens.includes('close')) close = true;
      else if (tokens.includes('keep-alive')) close = false;
    }
  }
  return { method: m[1]!, contentLength, close };
}

function serve(spec: Spec, index: number): net.Server {
  const bodies = new Map<string, Buffer>();
  const tail = (method: string) => {
    let b = bodies.get(method);
    if (!b) {
      const pad = method === 'eth_getLogs' && spec.logsPad ? ' '.repeat(spec.logsPad) : '';
      b = Buffer.from(`,"result":${spec.smallLogs && method === 'eth_getLogs' ? smallLogsResultJson() : resultJson(method, spec.chainId)}}${pad}`);
      bodies.set(method, b);
    }
    return b;
  };
  const tally = counts[index]!;
  return net.createServer((socket) => {
    socket.setNoDelay(true);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    /** Answers in request order: a slot per request, written once it and all before it are ready. */
    const slots: { out?: Buffer; close: boolean }[] = [];
    /** A request asked to close (or an error answer will): nothing after it is read. */
    let closing = false;
    const flush = () => {
      while (slots.length > 0 && slots[0]!.out && !socket.destroyed) {
        const { out, close } = slots.shift()!;
        if (close) {
          socket.end(out!);
          return;
        }
        socket.write(out!);
      }
    };
    const reply = (status: string, body: Buffer | string, close: boolean) => {
      closing ||= close;
      slots.push({ out: answer(status, body, close), close });
      flush();
    };
    let rest: Buffer | undefined;
    socket.on('data', (chunk: Buffer) => {
      if (closing) return;
      const buf = rest ? Buffer.concat([rest, chunk]) : chunk;
      let at = 0;
      for (;;) {
        const end = buf.indexOf(HEAD_END, at);
        if (end < 0) {
          if (buf.length - at > MAX_HEAD) return reply('431 Request Header Fields Too Large', '', true);
          break;
        }
        if (end - at > MAX_HEAD) return reply('431 Request Header Fields Too Large', '', true);
        const head = parseHead(buf.toString('latin1', at, end));
        if (typeof head === 'string') return reply(head, '', true);
        const bodyEnd = end + 4 + head.contentLength;
        if (buf.length < bodyEnd) break;
        const text = buf.toString('utf8', end + 4, bodyEnd);
        at = bodyEnd;
        if (head.method !== 'POST') {
          reply('405 Method Not Allowed', '', head.close);
          if (closing) return;
          continue;
        }
        let call: { id?: unknown; method?: unknown };
        try {
          call = JSON.parse(text) as { id?: unknown; method?: unknown };
        } catch {
          reply('400 Bad Request', '', head.close);
          if (closing) return;
          continue;
        }
        const method = String(call.method);
        tally[method] = (tally[method] ?? 0) + 1;
        const slot: { out?: Buffer; close: boolean } = { close: head.close };
        slots.push(slot);
        closing ||= head.close;
        const send = () => {
          slot.out = answer('200 OK', Buffer.concat([BODY_START, Buffer.from(JSON.stringify(call.id ?? null)), tail(method)]), slot.close);
          flush();
        };
        if (spec.delayMs > 0) delay.after(spec.delayMs, send);
        else send();
        if (closing) return;
      }
      rest = at < buf.length ? buf.subarray(at) : undefined;
    });
  });
}

const child = childMain({
  onCommand(command) {
    if (command.cmd === 'stats') return counts;
    if (command.cmd === 'reset') {
      for (const c of counts) for (const k of Object.keys(c)) delete c[k];
      return true;
    }
    throw new Error(`unknown command ${command.cmd}`);
  },
  async onShutdown() {
    for (const s of sockets) s.destroy();
    await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
    await delay.close();
  },
});

const ports: number[] = [];
for (const [i, spec] of specs.entries()) {
  const server = serve(spec, i);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  ports.push((server.address() as AddressInfo).port);
}
child.ready({ ports, pid: process.pid });
