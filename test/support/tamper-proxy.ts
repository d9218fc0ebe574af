/**
 * A provider that lies: an HTTP upstream that forwards each JSON-RPC call (single or batch) to a
 * real node (anvil) and lets the test rewrite the result of chosen calls before it answers. Counts
 * the calls it received, by method.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TamperCall {
  method: string;
  params: unknown[];
}

/** Returns the result to send instead, or undefined to send the node's. */
export type Tamper = (call: TamperCall, result: unknown) => unknown;

export interface TamperProxy {
  url: string;
  /** Calls received, by method (a batch counts each member). */
  methods: Map<string, number>;
  calls(method?: string): number;
  tamper: Tamper | undefined;
  /** HTTP requests received (a batch is one). */
  requests: number;
  /** Answer bytes sent so far. */
  bytes: number;
  /** Answers calls of these methods only after this many ms (a slow provider). */
  slow: Map<string, number>;
  /**
   * Called as each call arrives (a batch: each member); the call is answered only once what it
   * returns settles (a stalled provider the test releases when it has checked what it needed).
   */
  hold: ((call: TamperCall) => Promise<unknown> | undefined) | undefined;
  close(): Promise<void>;
}

async function forward(node: string, body: unknown): Promise<unknown> {
  const res = await fetch(node, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return res.json();
}

export async function startTamperProxy(node: string, tamper?: Tamper): Promise<TamperProxy> {
  const proxy: TamperProxy = {
    url: '',
    methods: new Map(),
    calls: (method) => (method === undefined ? [...proxy.methods.values()].reduce((a, b) => a + b, 0) : proxy.methods.get(method) ?? 0),
    tamper,
    slow: new Map(),
    hold: undefined,
    bytes: 0,
    requests: 0,
    close: async () => {},
  };
  const sockets = new Set<import('node:net').Socket>();
  type In = { id: unknown; method: string; params?: unknown[] };
  const one = async (call: In, forwarded?: { result?: unknown }) => {
    proxy.methods.set(call.method, (proxy.methods.get(call.method) ?? 0) + 1);
    const wait = proxy.slow.get(call.method);
    if (wait !== undefined) await new Promise((resolve) => setTimeout(resolve, wait).unref());
    const held = proxy.hold?.({ method: call.method, params: call.params ?? [] });
    if (held !== undefined) await held;
    const answer = forwarded ?? ((await forward(node, call)) as { result?: unknown });
    if (proxy.tamper && 'result' in answer) {
      const instead = proxy.tamper({ method: call.method, params: call.params ?? [] }, structuredClone(answer.result));
      if (instead !== undefined) return { ...answer, result: instead };
    }
    return answer;
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: unknown; method: string; params?: unknown[] } | { id: unknown; method: string; params?: unknown[] }[];
      proxy.requests += 1;
      // A batch goes to the node as one batch; each member's answer is then tampered with on its own.
      const answered = Array.isArray(body)
        ? (forward(node, body) as Promise<{ id: unknown; result?: unknown }[]>).then((all) => Promise.all(body.map((call) => one(call, all.find((a) => a.id === call.id) ?? {}))))
        : one(body);
      answered.then(
        (out) => {
          const text = JSON.stringify(out);
          proxy.bytes += Buffer.byteLength(text);
          res.writeHead(200, { 'content-type': 'application/json' }).end(text);
        },
        (err: Error) => res.writeHead(502).end(err.message),
      );
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  return proxy;
}
