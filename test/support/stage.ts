/**
 * Small fixtures for the unit tests of single pipeline stages: upstreams whose transport answers
 * from a function (counting calls), a chain of them, and a request with its context that runs
 * through one stage.
 */
import { EventEmitter } from 'node:events';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { newHealth, type Health } from '../../lib/health/health.js';
import type { RpcCall, RpcPayload } from '../../lib/jsonrpc/types.js';
import { silentLogger } from '../../lib/log.js';
import type { Middleware } from '../../lib/pipeline/compose.js';
import { initContext, type RpcContext } from '../../lib/pipeline/context.js';
import type { Chain, Upstream } from '../../lib/upstream/registry.js';
import type { UpstreamRequest } from '../../lib/upstream/transport/contract.js';

export interface TestUpstream extends Upstream {
  /** The requests its transport was sent, in order. */
  readonly sent: UpstreamRequest[];
}

/**
 * An upstream `u<index>` of provider `p<index>` (or `provider`) whose transport answers each
 * request with `answer(call)` as the JSON-RPC result (an Error: the call fails).
 */
export function testUpstream(
  index: number,
  options: { answer?: (call: RpcCall) => unknown; provider?: string; health?: Partial<Health>; url?: string } = {},
): TestUpstream {
  const sent: UpstreamRequest[] = [];
  const answer = options.answer ?? (() => '0x1');
  return {
    chainId: '1',
    index,
    url: options.url ?? `http://u${index}.test/KEY${index}`,
    label: options.url ?? `http://u${index}.test/***`,
    provider: options.provider ?? `p${index}`,
    hopToken: `t${index}`,
    secrets: { scrub: (text) => text, echoedIn: () => false },
    health: { ...newHealth(), ...options.health },
    sent,
    transport: {
      send(request) {
        sent.push(request);
        const call = request.payload.calls[0]!;
        const result = answer(call);
        if (result instanceof Error) return Promise.reject(result);
        return Promise.resolve({ body: Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: call.id, result })) });
      },
      close: async () => {},
    },
  };
}

/** Chain `1` over these upstreams (providers counted from their `provider`). */
export function testChain(upstreams: readonly Upstream[], fields: Partial<Chain> = {}): Chain {
  return {
    id: '1',
    confirmations: 2,
    extraConfirmable: new Map(),
    ignoredFields: {},
    upstreams,
    providerCount: new Set(upstreams.map((u) => u.provider)).size,
    ...fields,
  } as Chain;
}

/** A single call's payload, its raw bytes as a client would send them. */
export function single(method: string, params: unknown[] = [], id: number | string = 1): RpcPayload {
  const call: RpcCall = { id, method, params };
  return { calls: [call], batch: false, raw: Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, method, params })) };
}

/** A request (no socket) with a fresh context holding `fields`, and a response that is only an emitter. */
export function stageRequest(fields: Partial<RpcContext> = {}, headers: Record<string, string> = {}) {
  const req = Object.assign(new EventEmitter(), { headers, url: '/rpc/1', method: 'POST' }) as unknown as IncomingMessage;
  const res = new EventEmitter() as unknown as ServerResponse;
  const ctx = Object.assign(initContext(req, 'r1', silentLogger), fields);
  return { req, res, ctx };
}

/** Runs one stage; resolves with what it passed to `next` (`called: false` if it never did). */
export function runStage(stage: Middleware, req: IncomingMessage, res: ServerResponse): Promise<{ err: unknown }> {
  return new Promise((resolve, reject) => {
    try {
      stage(req, res, (err?: unknown) => resolve({ err }));
    } catch (e) {
      reject(e);
    }
  });
}

/** A node:http server on port 0 running `handler`; close() ends it and its connections. */
export async function serveHandler(handler: http.RequestListener): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
