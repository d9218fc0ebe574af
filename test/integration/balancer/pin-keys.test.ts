/**
 * Keys a Go node reads differently from omnigate. go-ethereum (and erigon, bor, op-geth) decode
 * JSON with encoding/json, which matches an object's keys to its fields case-insensitively
 * (`Params`, `PARAMS`, `toblock`, and `K` (U+212A) / `ſ` (U+017F) folded to `k` / `s`), the last
 * matching key winning. omnigate classifies by the exact keys and forwards the client's bytes: a
 * request with `"params": [a, "0x10"]` and `"Params": [a, "latest"]` was classified as pinned to
 * block 16 while the nodes answered the latest balance, confirmed under X-Confirmable: true. Such
 * an EIP-1898 object or eth_getLogs filter is refused before any upstream is called (-32602); a
 * request object with such a key is answered by one upstream, never confirmed (X-Confirmable:
 * false), alone or in a batch (where it is no chain constant either).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { startGateway } from '../../support/gateway.js';

const head = 100;
const address = '0x' + '44'.repeat(20);

/** Go's encoding/json key matching: folded keys, the last one wins. */
const fold = (key: string) => key.replace(/\u212a/g, 'k').replace(/\u017f/g, 's').toLowerCase();
function goObject(value: unknown): Record<string, unknown> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[fold(k)] = v;
  return out;
}

/** A block parameter as go-ethereum reads it: a tag or number string, or an EIP-1898 object. */
function goBlock(value: unknown): number {
  const o = goObject(value);
  const v = o ? o.blocknumber : value;
  if (v === undefined || v === 'latest') return head;
  return Number(v);
}

/** A go-ethereum-like node at head 100: balance at block n is n, one log per block. */
async function goNode(t: ExecutionContext, delayMs = 0) {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      seen.push(text);
      const parsed = JSON.parse(text) as unknown;
      const answers = (Array.isArray(parsed) ? parsed : [parsed]).map((c) => answer(goObject(c)!));
      const body = JSON.stringify(Array.isArray(parsed) ? answers : answers[0]);
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(body), delayMs);
    });
  });
  const answer = (call: Record<string, unknown>) => {
    const params = (call.params ?? []) as unknown[];
    let result: unknown;
    switch (call.method) {
      case 'eth_chainId':
        result = '0x1';
        break;
      case 'eth_blockNumber':
        result = `0x${head.toString(16)}`;
        break;
      case 'eth_getBalance':
        result = `0x${goBlock(params[1]).toString(16)}`;
        break;
      case 'eth_call': {
        // The contract called, as go-ethereum reads it: the last key that folds to "to"; and a
        // state override's balance for it, the last of the addresses that differ only in case.
        const to = String(goObject(params[0])!.to);
        const overrides = Object.entries((params[2] ?? {}) as Record<string, { balance?: string }>).filter(([a]) => a.toLowerCase() === to.toLowerCase());
        result = `${to}:${overrides.at(-1)?.[1].balance ?? 'none'}`;
        break;
      }
      case 'eth_getLogs': {
        const f = goObject(params[0])!;
        const logs = [];
        for (let n = goBlock(f.fromblock); n <= Math.min(goBlock(f.toblock), head); n++) logs.push({ blockNumber: `0x${n.toString(16)}`, logIndex: '0x0', data: '0x', topics: [] });
        result = logs;
        break;
      }
      default:
        result = null;
    }
    return { jsonrpc: '2.0', id: call.id, result };
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, seen };
}

async function setup(t: ExecutionContext, delayMs = 0) {
  const nodes = await Promise.all([goNode(t, delayMs), goNode(t, delayMs), goNode(t, delayMs)]);
  const gw = await startGateway({ chains: { 1: { rpcs: nodes.map((n) => n.url), confirmations: 2 } } });
  t.teardown(() => gw.close());
  return { nodes, gw };
}

const calls = (nodes: { seen: string[] }[]) => nodes.map((n) => n.seen.length);

const envelopeCases: [string, string][] = [
  ['"Params" after "params"', `{"jsonrpc":"2.0","id":7,"method":"eth_getBalance","params":["${address}","0x10"],"Params":["${address}","latest"]}`],
  ['"METHOD" after "method"', `{"jsonrpc":"2.0","id":7,"method":"eth_getBalance","params":["${address}","0x10"],"METHOD":"eth_blockNumber"}`],
];

for (const [name, body] of envelopeCases) {
  test(`a request object with ${name} is answered by one upstream, never confirmed as the pinned read`, async (t) => {
    const { nodes, gw } = await setup(t);
    const r = await gw.post('/rpc/1', body);
    t.is(r.status, 200, r.text);
    t.is(r.body.id, 7);
    t.is(r.headers['x-confirmable'], 'false');
    t.is(r.headers['x-required-confirmations'], '1');
    t.deepEqual(calls(nodes).sort(), [0, 0, 1], 'one upstream was called');
  });
}

test('a batch whose eth_chainId member has "METHOD": "eth_blockNumber" is not confirmed through it', async (t) => {
  const { nodes, gw } = await setup(t);
  const body = `[{"jsonrpc":"2.0","id":1,"method":"eth_getBalance","params":["${address}","0x10"]},{"jsonrpc":"2.0","id":2,"method":"eth_chainId","METHOD":"eth_blockNumber"}]`;
  const r = await gw.post('/rpc/1', body);
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'false');
  t.is(r.headers['x-required-confirmations'], '1');
  t.deepEqual(r.body.map((m: { result: string }) => m.result), ['0x10', '0x64']);
  t.true(nodes.some((n) => n.seen.length > 0));
});

const paramCases: [string, unknown[]][] = [
  ['EIP-1898 "BlockNumber": "latest" after "blockNumber"', ['eth_getBalance', [address, { blockNumber: '0x10', BlockNumber: 'latest' }]]],
  ['EIP-1898 "bloc\\u212aNumber" (Kelvin sign) after "blockNumber"', ['eth_getBalance', [address, { blockNumber: '0x10', 'bloc\u212aNumber': 'latest' }]]],
  ['eth_getLogs "ToBlock": "latest" after "toBlock"', ['eth_getLogs', [{ fromBlock: '0x60', toBlock: '0x62', ToBlock: 'latest' }]]],
  ['eth_getLogs "toblock": "latest" after "toBlock"', ['eth_getLogs', [{ fromBlock: '0x60', toBlock: '0x62', toblock: 'latest' }]]],
];

for (const [name, [method, params]] of paramCases) {
  test(`${name} is refused (-32602), never confirmed as the pinned read`, async (t) => {
    const { nodes, gw } = await setup(t);
    const r = await gw.post('/rpc/1', { jsonrpc: '2.0', id: 8, method, params });
    t.is(r.status, 200, `${r.headers['x-confirmable']} ${r.text}`); // -32602 with HTTP 200, as a node sends it
    t.is(r.headers['x-confirmable'], 'false');
    t.is(r.body.id, 8);
    t.is(r.body.error.code, -32602);
    t.deepEqual(calls(nodes), [0, 0, 0], 'no upstream was called');
  });
}

test('the exact keys are confirmed as before, pinned where the nodes read the pin', async (t) => {
  const { gw } = await setup(t);
  const balance = await gw.post('/rpc/1', { jsonrpc: '2.0', id: 9, method: 'eth_getBalance', params: [address, { blockNumber: '0x10', requireCanonical: true }] });
  t.is(balance.status, 200, balance.text);
  t.is(balance.headers['x-confirmable'], 'true');
  t.is(balance.body.result, '0x10');
  const logs = await gw.post('/rpc/1', { jsonrpc: '2.0', id: 10, method: 'eth_getLogs', params: [{ fromBlock: '0x60', toBlock: '0x62', address }] });
  t.is(logs.status, 200, logs.text);
  t.is(logs.headers['x-confirmable'], 'true');
  t.is(logs.body.result.length, 3);
});

const contractA = '0x' + 'aa'.repeat(20);
const contractB = '0x' + 'bb'.repeat(20);
/** Two spellings of one object whose keys differ only in case: the same keys to omnigate, the other order to a Go node. */
const foldedCases: [string, string, string][] = [
  ['"to" and "To"', `[{"to":"${contractA}","To":"${contractB}","data":"0x"},"0x10"]`, `[{"To":"${contractB}","to":"${contractA}","data":"0x"},"0x10"]`],
  [
    'a state override\'s address in two cases',
    `[{"to":"${contractA}","data":"0x"},"0x10",{"${contractA}":{"balance":"0x1"},"${contractA.toUpperCase().replace('0X', '0x')}":{"balance":"0x2"}}]`,
    `[{"to":"${contractA}","data":"0x"},"0x10",{"${contractA.toUpperCase().replace('0X', '0x')}":{"balance":"0x2"},"${contractA}":{"balance":"0x1"}}]`,
  ],
];

for (const [name, first, second] of foldedCases) {
  test(`two eth_call requests whose params object holds ${name}, in two orders, are each answered as their nodes read them, never confirmed nor merged`, async (t) => {
    const { nodes, gw } = await setup(t, 150);
    const body = (params: string, id: number) => `{"jsonrpc":"2.0","id":${id},"method":"eth_call","params":${params}}`;
    // At once: identical questions to omnigate would share one run.
    const [r1, r2] = await Promise.all([gw.post('/rpc/1', body(first, 1)), gw.post('/rpc/1', body(second, 2))]);
    for (const [r, params, id] of [[r1, first, 1], [r2, second, 2]] as const) {
      t.is(r.status, 200, r.text);
      t.is(r.body.id, id);
      const call = goObject((JSON.parse(params) as Record<string, unknown>[])[0])!;
      const overrides = Object.entries((JSON.parse(params) as unknown[])[2] ?? {}) as [string, { balance: string }][];
      t.is(r.body.result, `${String(call.to)}:${overrides.at(-1)?.[1].balance ?? 'none'}`, `the answer to the call as the nodes read it (X-Confirmable: ${r.headers['x-confirmable']})`);
      t.is(r.headers['x-confirmable'], 'false', `${params}: ${r.text}`);
      t.is(r.headers['x-required-confirmations'], '1');
    }
    t.is(calls(nodes).reduce((a, b) => a + b, 0), 2, 'one upstream each');
  });
}
