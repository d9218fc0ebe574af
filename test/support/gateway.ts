/**
 * Starts the real pipeline in a real connect (or express) app on port 0, and a tiny HTTP
 * client that returns status, headers and the parsed body (no keep-alive, so nothing lingers).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import connect from 'connect';
import express from 'express';
import { validateConfig, type OmnigateConfig } from '../../config/schema.js';
import type { Logger } from '../../lib/log.js';
import { pollHeadsNow } from '../../lib/health/tracker.js';
import { rpcPipeline, type RpcPipeline } from '../../middleware/index.js';

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  body: any;
}

export function makeConfig(raw: Record<string, unknown>): OmnigateConfig {
  const result = validateConfig(raw);
  if ('problems' in result) throw new Error(`test config invalid: ${JSON.stringify(result.problems)}`);
  return result.config;
}

export interface Gateway {
  url: string;
  rpc: RpcPipeline;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Reply>;
  request(method: string, path: string, body?: string | Buffer, headers?: Record<string, string>): Promise<Reply>;
  close(): Promise<void>;
}

/**
 * Tests count upstream calls exactly, and the fakes answer in about a millisecond: with the
 * default adaptive hedge (from 20 ms on such a chain) a loaded machine's stall adds a hedged call.
 * So the gateway of a test hedges after a fixed 1 s (the delay these tests were written against)
 * unless its config sets `timeouts.hedgeMs`; `timeouts: { ...adaptiveHedging }` asks for the
 * default adaptive delay (hedgeMs null is hedgeMs absent).
 */
export const adaptiveHedging = { hedgeMs: null } as const;

function withTestHedge(raw: Record<string, unknown>): Record<string, unknown> {
  const timeouts = (raw.timeouts ?? {}) as Record<string, unknown>;
  if (typeof timeouts !== 'object' || Object.hasOwn(timeouts, 'hedgeMs')) return raw;
  return { ...raw, timeouts: { ...timeouts, hedgeMs: 1000 } };
}

export async function startGateway(
  raw: Record<string, unknown>,
  options: { framework?: 'connect' | 'express'; logger?: Logger; mountPath?: string } = {},
): Promise<Gateway> {
  const config = makeConfig(withTestHedge(raw));
  const rpc = rpcPipeline(config, options.logger ? { logger: options.logger } : {});
  const handler: http.RequestListener =
    options.framework === 'express'
      ? (options.mountPath ? express().use(options.mountPath, rpc) : express().use(rpc))
      : (options.mountPath ? connect().use(options.mountPath, rpc as connect.NextHandleFunction) : connect().use(rpc as connect.NextHandleFunction));
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const request = (method: string, path: string, body?: string | Buffer, headers: Record<string, string> = {}) =>
    send(url, method, path, body, headers);
  return {
    url,
    rpc,
    request,
    post: (path, body, headers = {}) =>
      request('POST', path, typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body), {
        'content-type': 'application/json',
        ...headers,
      }),
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await rpc.close();
    },
  };
}

export function send(base: string, method: string, path: string, body?: string | Buffer, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${path}`, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: parsed });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A JSON-RPC request body. */
export const rpc = (method: string, params: unknown[] = [], id: unknown = 1) => ({ jsonrpc: '2.0', id, method, params });

/**
 * The latest head of each of these fakes' upstreams learned now, as a read that needs heads asks
 * for them (one `eth_blockNumber` each, lib/health/tracker.ts pollHeadsNow), then the fakes' counts
 * and request lists cleared: a test that counts calls of an `eth_getLogs` range (voted on only by
 * upstreams known to have its `toBlock`) starts from known heads, with no head poll in its counts.
 */
export async function learnHeads(gw: Gateway, fakes: readonly { url: string; calls: number; requests?: unknown[] }[]): Promise<void> {
  const of = (url: string) => fakes.some((f) => f.url === url.replace(/\/$/, ''));
  await Promise.all([...gw.rpc.registry.chains.values()].map((chain) => pollHeadsNow(chain, chain.upstreams.filter((u) => of(u.url)))));
  for (const f of fakes) {
    f.calls = 0;
    if (f.requests) f.requests.length = 0;
  }
}
