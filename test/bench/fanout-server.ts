/**
 * Bench child: the cheapest N=3 gateway, against which omnigate's N=3 path is read. It sends each
 * request's bytes to every upstream at once and answers with the first upstream's bytes once all
 * of them answered: the waiting of an N=3 answer with none of the verifying (no JSON parse, no
 * classification, no canonical form or hash, no health or metrics). Same parts as omnigate where
 * they are shared: node:http for the clients, omnigate's upstream transport (node:http with a
 * keep-alive agent per upstream, lib/upstream/transport/http.ts) for the upstreams.
 * argv[2]: JSON array of upstream URLs; argv[3]: `undici` for omnigate's undici transport
 * (lib/upstream/transport/undici.ts) instead; argv[4]: `capped` for the transport as omnigate's
 * registry makes it under the gateway's socket cap (a SocketPool of limits.upstreamSockets' 256,
 * each upstream its share for 4 HTTP upstreams, as the peers' omnigate has, and
 * upstreams.maxSockets' 128: the share's pool and the pool of lent room) instead of one pool of
 * 256. Command: `elu` (event-loop utilization so far).
 */
import http from 'node:http';
import { Cancellation } from '../../lib/upstream/transport/contract.js';
import { createHttpTransport } from '../../lib/upstream/transport/http.js';
import { createUndiciTransport } from '../../lib/upstream/transport/undici.js';
import { SocketPool } from '../../lib/upstream/transport/sockets.js';
import { shareOfCap } from '../../lib/upstream/registry.js';
import { serveHttpChild } from './ipc.js';

const urls = JSON.parse(process.argv[2] ?? '[]') as string[];
if (!Array.isArray(urls) || urls.length === 0) throw new Error('fanout-server: argv[2] must be a JSON array of upstream URLs');
const create = process.argv[3] === 'undici' ? createUndiciTransport : createHttpTransport;
const cap = process.argv[4] === 'capped' ? new SocketPool(256) : undefined;
const pools = urls.map((url) => create(url, cap ? { maxSockets: 128, sockets: cap, share: shareOfCap(cap.cap, 4) } : { maxSockets: 256 }));
const never = new Cancellation();
let seq = 0;

const server = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const raw = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    // The pool sends `payload.raw` as the body; nothing else of the payload is read on HTTP.
    const call = { payload: { calls: [], batch: false, raw }, requestId: `fan-${(seq += 1)}`, signal: never, timeoutMs: 30_000, maxBytes: 64 * 2 ** 20 };
    Promise.all(pools.map((pool) => pool.send(call))).then(
      (answers) => {
        const body = answers[0]!.body;
        res.writeHead(200, ['Content-Type', 'application/json', 'Content-Length', String(body.length)]);
        res.end(body);
      },
      (err: Error) => {
        res.writeHead(502, ['Content-Type', 'application/json']);
        res.end(JSON.stringify({ error: err.message }));
      },
    );
  });
});
await serveHttpChild(server, () => Promise.all(pools.map((p) => p.close())));
