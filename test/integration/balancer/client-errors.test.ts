/**
 * Errors a node itself sends, through real clients (issue 30, spec B5). Params omnigate refuses
 * itself (a block number without `0x`, an eth_getLogs filter with both `blockHash` and
 * `fromBlock`, a malformed hash) get its own -32602, and a method it does not serve (eth_subscribe)
 * its -32601: with HTTP 200, as a node sends them. ethers v6 reads a non-2xx answer as a transport
 * failure (SERVER_ERROR "server response 400 Bad Request", no JSON-RPC code); with 200 each
 * client's error (ethers v6 and viem) carries the node's code, exactly as it does when
 * the same client asks a node directly: a fake node that refuses such params as geth does, and a
 * real anvil node. Asserted on the wire: the clients' errors, the HTTP status, what the upstreams
 * received (the gateway's refusals reach none).
 *
 * Client settings: ethers `staticNetwork` (no eth_chainId detection) with `batchMaxCount: 1` (one
 * HTTP request per call: the status of a single answer is what is tested) or its default batching;
 * viem `retryCount: 0`, plain or `batch: true`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { JsonRpcProvider } from 'ethers';
import { createPublicClient, http as viemHttp, type PublicClient } from 'viem';
import { startAnvils, stopAllAnvils } from '../../support/anvil.js';
import { defaultAnswer, startFakeUpstream, type AnswerFn, type FakeUpstream } from '../../support/fake-upstream.js';
import { rpc, startGateway, type Gateway } from '../../support/gateway.js';

const FAKE_CHAIN = 1337; // defaultAnswer's eth_chainId
const ACCOUNT = '0x1111111111111111111111111111111111111111';
const HASH = `0x${'ab'.repeat(32)}`;

/** The requests no node accepts, and the code a node answers them with. */
const refused: { what: string; method: string; params: unknown[]; code: number }[] = [
  { what: 'a block number without 0x', method: 'eth_getBalance', params: [ACCOUNT, '5'], code: -32602 },
  { what: 'an eth_getLogs filter with both blockHash and fromBlock', method: 'eth_getLogs', params: [{ blockHash: HASH, fromBlock: '0x1' }], code: -32602 },
  { what: 'a malformed transaction hash', method: 'eth_getTransactionReceipt', params: ['0x1234'], code: -32602 },
  { what: 'a subscription over HTTP', method: 'eth_subscribe', params: ['newHeads'], code: -32601 },
];

const invalid = (message: string) => ({ error: { code: -32602, message } });

/** A node's answers: the refusals as geth words them (HTTP 200, as every node sends them), else defaultAnswer. */
const nodeAnswer: AnswerFn = (call) => {
  const p = call.params ?? [];
  switch (call.method) {
    case 'eth_getBalance':
      return typeof p[1] === 'string' && !p[1].startsWith('0x') && !['latest', 'pending', 'earliest', 'safe', 'finalized'].includes(p[1])
        ? invalid('invalid argument 1: hex string without 0x prefix')
        : defaultAnswer(call);
    case 'eth_getLogs': {
      const f = (p[0] ?? {}) as Record<string, unknown>;
      return f.blockHash !== undefined && (f.fromBlock !== undefined || f.toBlock !== undefined)
        ? invalid('invalid argument 0: cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other')
        : defaultAnswer(call);
    }
    case 'eth_getTransactionReceipt':
      return typeof p[0] === 'string' && /^0x[0-9a-f]{64}$/i.test(p[0]) ? { result: null } : invalid(`invalid argument 0: hex string has length ${String(p[0]).length - 2}, want 64 for common.Hash`);
    case 'eth_subscribe':
      return { error: { code: -32601, message: 'notifications not supported' } };
    default:
      return defaultAnswer(call);
  }
};

// ---------------------------------------------------------------------------------------------
// What each client makes of an error answer: its error's kind and the JSON-RPC code it carries.
// ---------------------------------------------------------------------------------------------

interface Seen {
  /** ethers: `err.code` (UNKNOWN_ERROR for a node's error, SERVER_ERROR for an HTTP failure); viem: the error class. */
  kind: string;
  /** The JSON-RPC code the client's error carries (ethers: `err.error.code`; viem: `err.code`), if any. */
  rpcCode: number | undefined;
}

/** ethers v6: one call, alone in its HTTP request (`batch` false) or in a batch beside eth_chainId. */
async function ethersSees(t: ExecutionContext, url: string, method: string, params: unknown[], batch: boolean): Promise<Seen> {
  const provider = new JsonRpcProvider(url, FAKE_CHAIN, { staticNetwork: true, batchMaxCount: batch ? 10 : 1 });
  try {
    const [bad, beside] = await Promise.allSettled([provider.send(method, params), batch ? provider.send('eth_chainId', []) : Promise.resolve(undefined)]);
    if (batch) t.is(beside.status, 'fulfilled', 'the member beside it is answered');
    if (bad.status === 'fulfilled') return { kind: 'no error', rpcCode: undefined };
    const err = bad.reason as { code?: unknown; error?: { code?: unknown } };
    return { kind: String(err.code), rpcCode: typeof err.error?.code === 'number' ? err.error.code : undefined };
  } finally {
    provider.destroy();
  }
}

const viemClient = (url: string, batch: boolean): PublicClient =>
  createPublicClient({ transport: viemHttp(url, { batch, retryCount: 0 }), cacheTime: 0 }) as PublicClient;

/** viem: one call (`batch`: beside eth_chainId in one HTTP batch). */
async function viemSees(t: ExecutionContext, url: string, method: string, params: unknown[], batch: boolean): Promise<Seen> {
  const client = viemClient(url, batch);
  const [bad, beside] = await Promise.allSettled([
    client.request({ method, params } as never),
    batch ? client.request({ method: 'eth_chainId' }) : Promise.resolve(undefined),
  ]);
  if (batch) t.is(beside.status, 'fulfilled', 'the member beside it is answered');
  if (bad.status === 'fulfilled') return { kind: 'no error', rpcCode: undefined };
  const err = bad.reason as { name?: unknown; code?: unknown };
  return { kind: String(err.name), rpcCode: typeof err.code === 'number' ? err.code : undefined };
}

const clients = { ethers: ethersSees, viem: viemSees } as const;

/** Every upstream call of `method` the fakes received, alone or in upstream batches. */
const received = (fakes: FakeUpstream[], method: string) =>
  fakes.reduce((n, f) => n + f.requests.flatMap((r) => (Array.isArray(r.body) ? r.body : [r.body]) as { method?: string }[]).filter((c) => c?.method === method).length, 0);

// ---------------------------------------------------------------------------------------------
// Fake nodes
// ---------------------------------------------------------------------------------------------

let fakes: FakeUpstream[];
let gw: Gateway;

test.before(async () => {
  fakes = await Promise.all([1, 2, 3].map(() => startFakeUpstream({ answer: nodeAnswer })));
  gw = await startGateway({ chains: { [FAKE_CHAIN]: { rpcs: fakes.map((f) => f.url) } } });
});

test.after.always(async () => {
  await gw?.close();
  await Promise.all((fakes ?? []).map((f) => f.close()));
  await stopAllAnvils();
});

for (const c of refused) {
  test.serial(`on the wire: ${c.what} (${c.method}) is the node's code with HTTP 200, from the gateway as from the node`, async (t) => {
    const body = rpc(c.method, c.params, 'w-1');
    const direct = await postJson(fakes[0]!.url, body);
    t.is(direct.status, 200);
    t.is((direct.body as { error: { code: number } }).error.code, c.code);
    const before = received(fakes, c.method);
    for (const path of [`/rpc/${FAKE_CHAIN}`, `/confirmations/3/rpc/${FAKE_CHAIN}`]) {
      const r = await gw.post(path, body);
      t.is(r.status, 200, `${path}: ${r.text}`);
      t.is(r.headers['content-type'], 'application/json');
      t.is(r.body.id, 'w-1');
      t.is(r.body.error.code, c.code, path);
      t.is(r.headers['x-confirmable'], 'false');
      t.is(r.headers['x-required-confirmations'], '1');
    }
    t.is(received(fakes, c.method), before, 'refused by the gateway: no upstream received it');
  });

  for (const [name, sees] of Object.entries(clients)) {
    for (const batch of [false, true]) {
      test.serial(`${name}${batch ? ' (batched)' : ''}: ${c.what} fails with ${c.code} through the gateway exactly as against the node`, async (t) => {
        const fromNode = await sees(t, fakes[0]!.url, c.method, c.params, batch);
        t.is(fromNode.rpcCode, c.code, `the node: ${JSON.stringify(fromNode)}`);
        const before = received(fakes, c.method);
        for (const path of [`/rpc/${FAKE_CHAIN}`, `/confirmations/3/rpc/${FAKE_CHAIN}`]) {
          const fromGateway = await sees(t, `${gw.url}${path}`, c.method, c.params, batch);
          t.deepEqual(fromGateway, fromNode, path);
        }
        t.is(received(fakes, c.method), before, 'refused by the gateway: no upstream received it');
      });
    }
  }
}

/**
 * The control: the same -32602 body sent with HTTP 400 (what omnigate did before) reaches ethers
 * as a transport failure without the code: what the tests above see is what the status does.
 * (viem 2.x reads a JSON-RPC error body on a non-2xx answer too, so it is not the control here.)
 */
test.serial('control: a -32602 answered with HTTP 400 reaches ethers as SERVER_ERROR without the code', async (t) => {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const text = JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'invalid argument 1: hex string without 0x prefix' } });
      res.writeHead(400, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const [c] = refused;
  t.deepEqual(await ethersSees(t, url, c!.method, c!.params, false), { kind: 'SERVER_ERROR', rpcCode: undefined });
});

// ---------------------------------------------------------------------------------------------
// A real node: anvil, directly and behind the gateway
// ---------------------------------------------------------------------------------------------

const ANVIL_CHAIN = 4243;

test.serial('anvil: each refusal reaches ethers and viem with the same code through the gateway as from the node directly', async (t) => {
  const cluster = await startAnvils(1, { chainId: ANVIL_CHAIN });
  const anvilGw = await startGateway({ chains: { [ANVIL_CHAIN]: { rpcs: cluster.urls } } });
  t.teardown(() => anvilGw.close());
  const anvil = cluster.urls[0]!;
  for (const c of refused) {
    // on the wire: the node's status and code, and the gateway's
    const body = rpc(c.method, c.params, 7);
    const direct = await postJson(anvil, body);
    const through = await anvilGw.post(`/rpc/${ANVIL_CHAIN}`, body);
    t.deepEqual([through.status, through.body.id, through.body.error?.code], [direct.status, 7, (direct.body as { error?: { code?: number } }).error?.code], `${c.what}: ${through.text} vs ${JSON.stringify(direct.body)}`);
    t.deepEqual([direct.status, (direct.body as { error?: { code?: number } }).error?.code], [200, c.code], c.what);
    for (const [name, sees] of Object.entries(clients)) {
      for (const batch of [false, true]) {
        const fromNode = await sees(t, anvil, c.method, c.params, batch);
        const fromGateway = await sees(t, `${anvilGw.url}/rpc/${ANVIL_CHAIN}`, c.method, c.params, batch);
        t.is(fromNode.rpcCode, c.code, `${name}${batch ? ' batched' : ''}, ${c.what}, anvil: ${JSON.stringify(fromNode)}`);
        t.deepEqual(fromGateway, fromNode, `${name}${batch ? ' batched' : ''}, ${c.what}`);
      }
    }
  }
});

/** One POST of a JSON body straight to a node; its status and parsed body. */
async function postJson(url: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
}
