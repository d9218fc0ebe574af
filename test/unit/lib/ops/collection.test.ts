import test from 'ava';
import { buildCollection, supportedMethods, type PostmanFolder, type PostmanRequestItem } from '../../../../lib/ops/collection.js';
import { neverConfirmable, pinnedMethods, ruleOf } from '../../../../lib/jsonrpc/methods.js';
import { classifyCall } from '../../../../lib/jsonrpc/classify.js';
import { writeTable } from '../../../../lib/jsonrpc/writes.js';
import { matchRpcRoute } from '../../../../lib/pipeline/route.js';
import { blockParam } from '../../../support/spec-tables.js';

const CONFIRMATIONS = 'eth (confirmations)';
const byHash = ['eth_getBlockByHash', 'eth_getTransactionReceipt', 'eth_getTransactionByHash'];
interface Body {
  jsonrpc: unknown;
  id: unknown;
  method: unknown;
  params: unknown[];
}

const collection = buildCollection({});
const folder = (name: string): PostmanFolder => {
  const found = collection.item.find((f) => f.name === name);
  if (!found) throw new Error(`no folder ${name}`);
  return found;
};
const allItems = (): [PostmanFolder, PostmanRequestItem][] => collection.item.flatMap((f) => f.item.map((i) => [f, i] as [PostmanFolder, PostmanRequestItem]));
const body = (item: PostmanRequestItem): Body => JSON.parse(item.request.body.raw) as Body;

test('declares the Postman Collection v2.1 schema', (t) => {
  t.is(collection.info.schema, 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json');
  t.is(collection.info.name, 'omnigate');
  t.true(collection.info.description.length > 0);
});

test('has exactly 2 top-level folders, eth and eth (confirmations)', (t) => {
  t.deepEqual(
    collection.item.map((f) => f.name),
    ['eth', CONFIRMATIONS],
  );
  for (const f of collection.item) t.true(f.item.length > 0, f.name);
});

test('every request is a POST with a JSON-RPC 2.0 body whose method is the item name', (t) => {
  for (const [f, item] of allItems()) {
    const where = `${f.name}/${item.name}`;
    t.is(item.request.method, 'POST', where);
    t.deepEqual(item.request.header, [{ key: 'Content-Type', value: 'application/json' }], where);
    t.is(item.request.body.mode, 'raw', where);
    t.is(item.request.body.options.raw.language, 'json', where);
    t.true(item.request.body.raw.includes('\n'), `${where} is pretty-printed`);
    const b = body(item);
    t.is(b.jsonrpc, '2.0', where);
    t.is(b.id, 1, where);
    t.is(b.method, item.name, where);
    t.true(Array.isArray(b.params), where);
    t.deepEqual(item.response, [], where);
  }
});

test('URLs use {{baseUrl}}, {{chainId}} and {{n}} and match the rpc routes', (t) => {
  const expected: Record<string, string> = {
    eth: '{{baseUrl}}/rpc/{{chainId}}',
    [CONFIRMATIONS]: '{{baseUrl}}/confirmations/{{n}}/rpc/{{chainId}}',
  };
  for (const [f, item] of allItems()) {
    const { url } = item.request;
    t.is(url.raw, expected[f.name] ?? `no URL for folder ${f.name}`, item.name);
    t.deepEqual(url.host, ['{{baseUrl}}']);
    t.is([...url.host, ...url.path].join('/'), url.raw);
    const route = matchRpcRoute(`/${url.path.join('/').replace('{{chainId}}', '137').replace('{{n}}', '3')}`);
    t.deepEqual(route, f.name === 'eth' ? { chainId: '137' } : { chainId: '137', confirmations: '3' });
  }
  const names = collection.variable.map((v) => v.key);
  t.deepEqual(names, ['baseUrl', 'chainId', 'n']);
});

test('method names are unique inside each folder', (t) => {
  for (const f of collection.item) {
    const names = f.item.map((i) => i.name);
    t.is(new Set(names).size, names.length, f.name);
  }
  t.is(new Set(supportedMethods.map((m) => m.method)).size, supportedMethods.length);
});

test('the eth folder has every supported method, about 40 of them', (t) => {
  t.deepEqual(
    folder('eth').item.map((i) => i.name),
    supportedMethods.map((m) => m.method),
  );
  t.true(supportedMethods.length >= 35, `${supportedMethods.length} methods`);
  for (const m of [...pinnedMethods, ...[...neverConfirmable].filter((m) => !(m !== 'eth_sendRawTransaction' && Object.hasOwn(writeTable, m))).filter((m) => !/^(eth_baseFee|eth_blobBaseFee|eth_sendTransaction|eth_newFilter|eth_newBlockFilter|eth_newPendingTransactionFilter|eth_uninstallFilter|eth_getFilterChanges|eth_getFilterLogs|txpool_\w+|testing_\w+)$/.test(m)), ...byHash, 'eth_chainId', 'net_version', 'web3_clientVersion']) {
    t.truthy(supportedMethods.find((s) => s.method === m), m);
  }
});

test('the confirmations folder has the 8 pinned methods plus the 3 commonly configured by-hash methods', (t) => {
  const names = folder(CONFIRMATIONS).item.map((i) => i.name);
  t.deepEqual([...names].sort(), [...pinnedMethods, ...byHash].sort());
});

test('every pinned example in the confirmations folder uses a hex block number and is confirmable', (t) => {
  for (const item of folder(CONFIRMATIONS).item) {
    t.false(/"(latest|pending|safe|finalized)"/i.test(item.request.body.raw), item.name);
    const index = blockParam[item.name];
    if (index === undefined) continue;
    const { params } = body(item);
    const blocks = index === 'filter' ? [(params[0] as Record<string, unknown>).fromBlock, (params[0] as Record<string, unknown>).toBlock] : [params[index]];
    for (const block of blocks) t.regex(String(block), /^0x[0-9a-f]+$/i, item.name);
    const c = classifyCall({ id: 1, method: item.name, params }, new Map());
    t.true(c.confirmable, `${item.name}: ${c.reason}`);
  }
});

test('the by-hash examples are confirmable (the method table pins them by hash)', (t) => {
  for (const item of folder(CONFIRMATIONS).item.filter((i) => byHash.includes(i.name))) {
    t.true(classifyCall({ id: 1, method: item.name, params: body(item).params }, new Map()).confirmable, item.name);
  }
});

test('descriptions say whether the method is confirmable', (t) => {
  for (const [, item] of allItems()) {
    const d = item.request.description;
    t.false(d.includes('\n'), item.name);
    if (pinnedMethods.includes(item.name)) t.regex(d, /Confirmable when pinned/, item.name);
    else if (neverConfirmable.has(item.name)) t.regex(d, /Never confirmable/, item.name);
    else if (ruleOf(item.name)?.confirmable) t.regex(d, /Confirmable/, item.name);
    else t.regex(d, /Answered by one upstream/, item.name);
  }
});

test('example addresses and hashes are 20 and 32 bytes', (t) => {
  for (const m of supportedMethods) {
    for (const hex of JSON.stringify(m.params).match(/0x[0-9a-f]{33,}/gi) ?? []) {
      if (m.method === 'eth_sendRawTransaction' || m.method === 'eth_call' || m.method === 'eth_createAccessList') continue;
      t.true(hex.length === 42 || hex.length === 66, `${m.method}: ${hex}`);
    }
  }
  const call = supportedMethods.find((m) => m.method === 'eth_call');
  t.regex((call?.params[0] as { data: string }).data, /^0x70a08231[0-9a-f]{64}$/);
});

test('defaults of the collection variables', (t) => {
  t.deepEqual(
    collection.variable.map(({ key, value }) => ({ key, value })),
    [
      { key: 'baseUrl', value: 'http://localhost:5000' },
      { key: 'chainId', value: '1' },
      { key: 'n', value: '2' },
    ],
  );
});

test('options override the variables', (t) => {
  const c = buildCollection({ baseUrl: 'https://rpc.example.com/', chainId: '10', confirmations: 5 });
  t.deepEqual(
    c.variable.map(({ key, value }) => ({ key, value })),
    [
      { key: 'baseUrl', value: 'https://rpc.example.com' },
      { key: 'chainId', value: '10' },
      { key: 'n', value: '5' },
    ],
  );
  t.deepEqual(c.item, collection.item, 'requests only refer to the variables');
});

test('rejects a confirmations value that is not a positive integer', (t) => {
  for (const confirmations of [0, -1, 1.5, Number.NaN]) {
    t.throws(() => buildCollection({ confirmations }), { instanceOf: RangeError }, String(confirmations));
  }
});

test('survives a JSON round trip unchanged and builds the same object each time', (t) => {
  t.deepEqual(JSON.parse(JSON.stringify(collection)), collection);
  const a = buildCollection({});
  a.item[0]!.item.pop();
  t.deepEqual(buildCollection({}), collection);
});

test('pathPrefix puts the mount path before every route; empty and slashes-only prefixes are the root', (t) => {
  const c = buildCollection({ pathPrefix: '/gateway/v1/' });
  const urls = c.item.flatMap((f) => f.item.map((i) => i.request.url));
  t.deepEqual(new Set(urls.map((u) => u.raw)), new Set(['{{baseUrl}}/gateway/v1/rpc/{{chainId}}', '{{baseUrl}}/gateway/v1/confirmations/{{n}}/rpc/{{chainId}}']));
  t.true(urls.every((u) => u.path[0] === 'gateway' && u.path[1] === 'v1'));
  t.deepEqual(buildCollection({ pathPrefix: '' }), collection);
  t.deepEqual(buildCollection({ pathPrefix: '/' }), collection);
});

test('clientKeys: an empty apiKey variable and X-Api-Key: {{apiKey}} on every request, nothing else changed', (t) => {
  const keyed = buildCollection({ clientKeys: true });
  t.deepEqual(
    keyed.variable.map(({ key, value }) => ({ key, value })),
    [...collection.variable.map(({ key, value }) => ({ key, value })), { key: 'apiKey', value: '' }],
  );
  const items = keyed.item.flatMap((f) => f.item);
  t.is(items.length, allItems().length);
  for (const item of items) t.deepEqual(item.request.header, [{ key: 'Content-Type', value: 'application/json' }, { key: 'X-Api-Key', value: '{{apiKey}}' }], item.name);
  const strip = (c: typeof keyed) => c.item.map((f) => ({ ...f, item: f.item.map((i) => ({ ...i, request: { ...i.request, header: i.request.header.filter((h) => h.key !== 'X-Api-Key') } })) }));
  t.deepEqual(strip(keyed), collection.item);
});
