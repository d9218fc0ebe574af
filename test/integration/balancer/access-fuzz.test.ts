/**
 * A property-based run over the door's new paths and headers: generated RPC routes with and
 * without a key segment (real keys, near misses, random and percent-encoded ones), generated
 * Authorization and X-Api-Key headers, single calls and batches with generated ids, against a
 * gateway with client keys and an anonymous tier. Every answer must be JSON: for a single call a
 * JSON-RPC answer or error with the client's id; for a batch an array, or one error with id null;
 * with a documented status and code; never echoing a presented key. Afterwards the gateway still
 * answers. Deterministic: the seed is fixed (FUZZ_SEED, FUZZ_RUNS to change them).
 */
import test from 'ava';
import fc from 'fast-check';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream.js';
import { rpc, startGateway, type Gateway } from '../../support/gateway.js';

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : 0x5eed_acce;
const RUNS = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : 600;
const KEYS = ['relayer-key-0123456789abcdef', 'readonly-key-fedcba9876543210', 'ops-key-00112233445566778899'];

/** HTTP status → the JSON-RPC codes it may carry here (lib/pipeline/README.md "Errors"). */
const codesByStatus: Record<number, number[]> = {
  200: [-32601, -32602],
  400: [-32002, -32003, -32009],
  401: [-32018],
  403: [-32019],
  404: [-32001],
  503: [-32016],
};

let fakes: FakeUpstream[];
let gw: Gateway;

test.before(async () => {
  fakes = await Promise.all([startFakeUpstream(), startFakeUpstream()]);
  gw = await startGateway({
    chains: { 1: { rpcs: fakes.map((f) => f.url) }, 10: { rpcs: [fakes[0]!.url] } },
    access: {
      anonymous: { chains: [1], maxConfirmations: 1, writes: false },
      keys: [
        { label: 'relayer', key: KEYS[0], minConfirmations: 2 },
        { label: 'readonly', key: KEYS[1], writes: false, denyMethods: ['eth_getLogs'], chains: [10] },
        { label: 'ops', key: KEYS[2], admin: true, methods: ['eth_chainId'] },
      ],
    },
  });
});

test.after.always(async () => {
  await gw?.close();
  await Promise.all((fakes ?? []).map((f) => f.close()));
});

const urlChars = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._~-%!$&\'()*+,;=:@');
const headerChars = fc.constantFrom(...' !"#$%&\'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~');
const randomKey = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...KEYS) },
  fc.constantFrom(...KEYS).map((k) => `${k.slice(0, -1)}Z`),
  fc.constantFrom(...KEYS).map((k) => encodeURIComponent(k).replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`)),
  fc.array(urlChars, { minLength: 1, maxLength: 40 }).map((a) => a.join('')),
);
const headerValue = fc.array(headerChars, { minLength: 0, maxLength: 60 }).map((a) => a.join('').trim());
const route = fc.tuple(
  fc.constantFrom('/rpc/', '/confirmations/1/rpc/', '/confirmations/2/rpc/', '/confirmations/3/rpc/', '/confirmations/0/rpc/', '/finalized/rpc/', '/confirmations/2/finalized/rpc/'),
  fc.constantFrom('1', '10', '999', 'x'),
  fc.option(randomKey, { nil: undefined }),
  fc.boolean(),
);
const headers = fc.oneof(
  { weight: 3, arbitrary: fc.constant({} as Record<string, string>) },
  { weight: 2, arbitrary: randomKey.map((k) => ({ authorization: `Bearer ${k}` })) },
  { weight: 2, arbitrary: randomKey.map((k) => ({ 'x-api-key': k })) },
  {
    weight: 1,
    arbitrary: fc.record(
      {
        authorization: fc.oneof(randomKey.map((k) => `bearer  ${k}`), headerValue, fc.constant('Basic dTpw')),
        'x-api-key': fc.oneof(randomKey, headerValue),
      },
      { requiredKeys: [] },
    ),
  },
);
const id = fc.oneof(fc.integer({ min: -1e9, max: 1e9 }), fc.string({ maxLength: 20 }));
const method = fc.constantFrom('eth_chainId', 'eth_blockNumber', 'eth_getLogs', 'eth_sendRawTransaction', 'eth_getBalance', 'eth_call');
const call = fc.tuple(method, id).map(([m, i]) => rpc(m, m === 'eth_getBalance' ? ['0x00000000000000000000000000000000000000aa', '0x10'] : m === 'eth_sendRawTransaction' ? ['0x02'] : m === 'eth_getLogs' ? [{ fromBlock: '0x1', toBlock: '0x1' }] : [], i));
const body = fc.oneof(call, fc.array(call, { minLength: 1, maxLength: 4 }));

test('generated keys, routes and headers: always JSON-RPC with the client\'s id, a documented status and code, never a key echoed', async (t) => {
  const statuses = new Map<number, number>();
  await fc.assert(
    fc.asyncProperty(route, headers, body, async ([prefix, chain, key, slash], hdrs, payload) => {
      const path = `${prefix}${chain}${key === undefined ? '' : `/${key}`}${slash ? '/' : ''}`;
      const r = await gw.post(path, payload, hdrs);
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      const where = `${r.status} ${path} ${JSON.stringify(hdrs)} ${r.text}`;
      if (r.status === 404 && r.body === undefined) return true; // a segment the route does not take: left to the next handler
      if (r.body === undefined) throw new Error(`not JSON: ${where}`);
      const h = hdrs as { authorization?: string; 'x-api-key'?: string };
      const presented = [key, h['x-api-key'], h.authorization?.replace(/^bearer\s+/i, '')].filter((k): k is string => k !== undefined && k.length >= 8);
      for (const k of presented) if (r.text.includes(k)) throw new Error(`a key is echoed: ${where}`);
      if (Array.isArray(payload) && Array.isArray(r.body)) {
        if (r.status !== 200 || r.body.length !== payload.length) throw new Error(`batch: ${where}`);
        r.body.forEach((m: { id: unknown; error?: { code: number } }, i: number) => {
          if (m.id !== payload[i]!.id) throw new Error(`member id: ${where}`);
          if (m.error && ![-32019, -32601, -32602, -32010, -32011, -32016, -32017, -32003].includes(m.error.code)) throw new Error(`member code: ${where}`);
        });
        return true;
      }
      if (r.body.jsonrpc !== '2.0') throw new Error(`not JSON-RPC: ${where}`);
      const expectedId = Array.isArray(payload) ? null : payload.id;
      if (r.body.id !== expectedId) throw new Error(`id: ${where}`);
      if (r.body.error === undefined) {
        if (r.status !== 200) throw new Error(`status: ${where}`);
        return true;
      }
      const allowed = codesByStatus[r.status];
      if (!allowed || !allowed.includes(r.body.error.code)) throw new Error(`code: ${where}`);
      return true;
    }),
    { seed: SEED, numRuns: RUNS },
  );
  // The run reached every outcome of the door, not only its first refusal.
  for (const status of [200, 401, 403]) t.true((statuses.get(status) ?? 0) > RUNS / 50, `${status}: ${JSON.stringify([...statuses])}`);
  t.is((await gw.request('GET', '/health')).status, 200);
  t.is((await gw.post('/rpc/1', rpc('eth_chainId'), { 'x-api-key': KEYS[0]! })).status, 200);
});
