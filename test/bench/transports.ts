/**
 * CPU per call of omnigate's two HTTP upstream transports (node:http, `lib/upstream/transport/http.ts`;
 * undici, `undici.ts`), each under the gateway's socket cap (a SocketPool of 256), against a lean
 * fake upstream in its own process (a kept-alive HTTP/1.1 answer per request), `TRANSPORTS_CONC`
 * (64) calls in flight, `TRANSPORTS_CALLS` (20,000) calls per measure after as many to warm up,
 * `TRANSPORTS_ROUNDS` (5) interleaved rounds. The CPU is this process's (the client's side only).
 * `TRANSPORTS_CLIENTS=undici` (or `node`) measures one client only: code shared by both clients
 * (call.ts) then sees one kind of call, as in a gateway, which uses one client.
 * Arguments: directories holding a `lib/` tree to compare (an earlier build's sources, say
 * `git archive <commit> lib config | tar -x -C /tmp/before`); none: this repository's. Run:
 *   node --import tsx test/bench/transports.ts [tree…]
 * Figures in test/bench/README.md.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The fake upstream, when this file runs as the child. */
function serve(): void {
  const body = '{"jsonrpc":"2.0","id":1,"result":"0x10"}';
  const answer = Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nKeep-Alive: timeout=60\r\n\r\n${body}`);
  const server = net.createServer((socket) => {
    let buffered = '';
    socket.on('data', (data: Buffer) => {
      buffered += data.toString('latin1');
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end === -1) return;
        const length = Number(/content-length:\s*(\d+)/i.exec(buffered.slice(0, end))?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        buffered = buffered.slice(end + 4 + length);
        socket.write(answer);
      }
    });
    socket.on('error', () => {});
  });
  server.listen(0, '127.0.0.1', () => process.send!((server.address() as net.AddressInfo).port));
}

interface Tree {
  dir: string;
  createHttpTransport: (url: string, options: object) => Transport;
  createUndiciTransport: (url: string, options: object) => Transport;
  SocketPool: new (cap: number) => object;
  Cancellation: new () => object;
}
interface Transport {
  send(request: object): Promise<unknown>;
  close(): Promise<void>;
}

async function load(dir: string): Promise<Tree> {
  const at = (file: string) => import(path.join(dir, 'lib/upstream/transport', file));
  const [http, undici, sockets, contract] = await Promise.all([at('http.ts'), at('undici.ts'), at('sockets.ts'), at('contract.ts')]);
  return { dir, ...http, ...undici, ...sockets, ...contract } as Tree;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function main(): Promise<void> {
  const calls = Number(process.env.TRANSPORTS_CALLS ?? 20_000);
  const concurrency = Number(process.env.TRANSPORTS_CONC ?? 64);
  const rounds = Number(process.env.TRANSPORTS_ROUNDS ?? 5);
  const clients = (process.env.TRANSPORTS_CLIENTS ?? 'undici,node').split(',') as ('node' | 'undici')[];
  const here = fileURLToPath(new URL('../..', import.meta.url));
  const trees = await Promise.all((process.argv.length > 2 ? process.argv.slice(2) : [here]).map((d) => load(path.resolve(d))));
  const upstream = fork(fileURLToPath(import.meta.url), ['--upstream'], { execArgv: ['--import', 'tsx'] });
  const [port] = (await once(upstream, 'message')) as [number];
  const url = `http://127.0.0.1:${port}/`;
  const raw = Buffer.from('{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}');

  /** µs of CPU per call of one client of one tree. */
  async function measure(tree: Tree, client: 'node' | 'undici'): Promise<number> {
    const sockets = new tree.SocketPool(256);
    const transport = client === 'node' ? tree.createHttpTransport(url, { sockets }) : tree.createUndiciTransport(url, { sockets });
    const request = () => ({ payload: { calls: [], batch: false, raw }, requestId: 'bench', signal: new tree.Cancellation(), timeoutMs: 10_000, maxBytes: 1_000_000 });
    let left = 0;
    const worker = async () => {
      while (left-- > 0) await transport.send(request());
    };
    left = calls;
    await Promise.all(Array.from({ length: concurrency }, worker));
    left = calls;
    const before = process.cpuUsage();
    await Promise.all(Array.from({ length: concurrency }, worker));
    const used = process.cpuUsage(before);
    await transport.close();
    return (used.user + used.system) / calls;
  }

  const figures = new Map<string, number[]>();
  const key = (tree: Tree, client: string) => `${client} ${tree.dir}`;
  for (let round = 0; round < rounds; round += 1) {
    for (const client of clients) {
      for (const tree of trees) {
        const us = await measure(tree, client);
        figures.set(key(tree, client), [...(figures.get(key(tree, client)) ?? []), us]);
      }
    }
  }
  upstream.kill();
  const show = (values: number[]) => values.map((v) => v.toFixed(2)).join(', ');
  for (const [name, values] of figures) console.log(`${name}: ${median(values).toFixed(1)} µs per call (rounds ${values.map((v) => v.toFixed(1)).join(', ')})`);
  for (const client of clients) {
    for (const tree of trees.slice(1)) {
      const base = figures.get(key(trees[0]!, client))!;
      const ratios = figures.get(key(tree, client))!.map((v, i) => v / base[i]!);
      console.log(`${client}: ${tree.dir} ÷ ${trees[0]!.dir}: ${median(ratios).toFixed(2)}× (rounds ${show(ratios)})`);
    }
  }
  for (const tree of clients.length === 2 ? trees : []) {
    const node = figures.get(key(tree, 'node'))!;
    const ratios = figures.get(key(tree, 'undici'))!.map((v, i) => v / node[i]!);
    console.log(`undici ÷ node:http (${tree.dir}): ${median(ratios).toFixed(2)}× (rounds ${show(ratios)})`);
  }
}

if (process.argv.includes('--upstream')) serve();
else await main();
