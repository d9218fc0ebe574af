/**
 * fast-check arbitraries for the balancer fuzz test (test/integration/balancer/fuzz.test.ts): HTTP
 * methods, paths, headers and request bodies, from plain valid JSON-RPC calls to random bytes.
 *
 * Bodies are built as a small JSON tree that may hold raw number tokens (`1e400`, `-0`, 2^64…),
 * repeated keys and `__proto__` keys, then serialized by hand, so the bytes on the wire are
 * exactly what was generated. What the gateway should answer is worked out by the test from the
 * bytes alone (see `expectedIds`), never from the generator's intent.
 */
import fc from 'fast-check';

// ---------------------------------------------------------------------------------------------
// A JSON tree with raw tokens and ordered (possibly repeated) keys

/** A token written as is (a number JSON.stringify cannot produce, or deliberately broken text). */
export class Raw {
  constructor(readonly text: string) {}
}
/** An object as an ordered list of entries: keys may repeat or be `__proto__`. */
export class Entries {
  constructor(readonly entries: [string, unknown][]) {}
}

/** Serializes a generated tree; `sep` is put between tokens (whitespace variants). */
export function serialize(value: unknown, sep = ''): string {
  if (value instanceof Raw) return value.text;
  if (value instanceof Entries) {
    return `{${sep}${value.entries.map(([k, v]) => `${JSON.stringify(k)}${sep}:${sep}${serialize(v, sep)}`).join(`,${sep}`)}${sep}}`;
  }
  if (Array.isArray(value)) return `[${sep}${value.map((v) => serialize(v, sep)).join(`,${sep}`)}${sep}]`;
  if (value !== null && typeof value === 'object') return serialize(new Entries(Object.entries(value)), sep);
  if (value === undefined) return 'null';
  return JSON.stringify(value) ?? 'null';
}

const separator = fc.constantFrom('', '', '', ' ', '\n', '\t', '\r\n  ');

// ---------------------------------------------------------------------------------------------
// Leaves

const unicodeString = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  // lone surrogates, NUL, BOM, RTL marks, escapes as text
  fc.constantFrom('\ud800', '\udfff', 'a\ud83dz', '\u0000', '\ufeff', '\u202e1', 'é', '日本', '١٢٣', '\\u0041', '\\', '"', '𝟙', '\u00a0'),
);

export const hugeNumberToken = fc.oneof(
  fc.constantFrom(
    '1e400',
    '-1e400',
    '18446744073709551616',
    '-18446744073709551617',
    '9007199254740992',
    '9007199254740991',
    '-9007199254740991',
    '-9007199254740993',
    '-0',
    '0.0',
    '1.0',
    '1e2',
    '1E+2',
    '1e-7',
    '5e-324',
    '1.7976931348623157e308',
    '123456789012345678901234567890',
    '0.30000000000000004',
  ),
  fc.bigInt({ min: -(2n ** 90n), max: 2n ** 90n }).map((b) => String(b)),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => String(d).replace('Infinity', '1e999')),
).map((t) => new Raw(t));

const jsonLeaf: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.constant(null), weight: 1 },
  { arbitrary: fc.boolean(), weight: 1 },
  { arbitrary: fc.integer(), weight: 2 },
  { arbitrary: hugeNumberToken, weight: 1 },
  { arbitrary: unicodeString, weight: 3 },
);

/** Random JSON (small), with raw tokens and odd keys. */
export const randomJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    jsonLeaf,
    fc.array(tie('value'), { maxLength: 4 }),
    fc
      .array(fc.tuple(fc.oneof(fc.constantFrom('__proto__', 'constructor', 'id', 'toString', ''), unicodeString), tie('value')), {
        maxLength: 4,
      })
      .map((e) => new Entries(e)),
  ),
})).value;

/** `[[[[…]]]]` or `{"a":{"a":…}}`, as raw text (too deep to build as a tree cheaply). */
export const deepNesting = fc
  .tuple(fc.constantFrom('array', 'object', 'mixed'), fc.integer({ min: 50, max: 60_000 }))
  .map(([kind, depth]) => {
    if (kind === 'array') return new Raw(`${'['.repeat(depth)}${']'.repeat(depth)}`);
    if (kind === 'object') return new Raw(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);
    return new Raw(`${'[{"blockNumber":'.repeat(depth)}"0x1"${'}]'.repeat(depth)}`);
  });

// ---------------------------------------------------------------------------------------------
// Ethereum-ish values

const hexDigits = (min: number, max: number) =>
  fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'), minLength: min, maxLength: max });

export const blockTag: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.nat({ max: 0xffff }).map((n) => `0x${n.toString(16)}`), weight: 6 },
  { arbitrary: fc.constantFrom('latest', 'pending', 'earliest', 'safe', 'finalized'), weight: 4 },
  {
    arbitrary: fc.constantFrom('LATEST', 'Latest', 'PENDING', 'EARLIEST', 'Safe', 'FINALIZED', 'latest ', ' latest', 'lates', 'latest\u0000'),
    weight: 2,
  },
  {
    arbitrary: fc.constantFrom('0x', '0x0', '0x00', '0x01', '0X1', '0xG', '0x-1', '-0x1', '0x1.5', '0x 1', `0x${'f'.repeat(64)}`, `0x${'f'.repeat(300)}`, '0xFFFF'),
    weight: 2,
  },
  { arbitrary: hexDigits(0, 70).map((h) => `0x${h}`), weight: 1 },
  { arbitrary: fc.constantFrom('16', '0', '-1', '1e3', '', ' ', '١', '0x١'), weight: 1 },
  { arbitrary: fc.oneof(fc.integer(), hugeNumberToken, fc.constant(null), fc.boolean()), weight: 1 },
  {
    arbitrary: fc.oneof(
      hexDigits(64, 64).map((h) => ({ blockHash: `0x${h}` })),
      hexDigits(64, 64).map((h) => ({ blockHash: `0x${h}`, requireCanonical: true })),
      fc.constantFrom(
        { blockHash: '0x1234' },
        { blockHash: null },
        { blockHash: 1 },
        { blockNumber: '0x1' },
        { blockNumber: '0x10', requireCanonical: 'yes' },
        { blockNumber: 'latest' },
        { blockNumber: 'PENDING' },
        { blockNumber: 'earliest' },
        { blockNumber: 16 },
        { blockNumber: null },
        { blockNumber: { blockNumber: '0x1' } },
        { blockHash: `0x${'ab'.repeat(32)}`, blockNumber: '0x1' },
        {},
        [],
        ['0x1'],
      ),
      fc.record({ blockHash: fc.option(randomJson), blockNumber: fc.option(randomJson) }, { requiredKeys: [] }),
    ),
    weight: 2,
  },
  { arbitrary: randomJson, weight: 1 },
);

export const address: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.constant('0x1111111111111111111111111111111111111111'), weight: 3 },
  { arbitrary: hexDigits(40, 40).map((h) => `0x${h}`), weight: 3 },
  { arbitrary: fc.constantFrom('0x', '0x1', 'vitalik.eth', '', '0X1111111111111111111111111111111111111111', `0x${'1'.repeat(41)}`), weight: 1 },
  { arbitrary: randomJson, weight: 1 },
);

const hash32 = hexDigits(64, 64).map((h) => `0x${h}`);

const logFilter: fc.Arbitrary<unknown> = fc.oneof(
  {
    arbitrary: fc.record(
      {
        fromBlock: blockTag,
        toBlock: blockTag,
        blockHash: fc.oneof(hash32, blockTag),
        address: fc.oneof(address, fc.array(address, { maxLength: 3 })),
        topics: fc.array(fc.oneof(hash32, fc.constant(null), fc.array(hash32, { maxLength: 2 }), randomJson), { maxLength: 5 }),
        extra: randomJson,
      },
      { requiredKeys: [] },
    ),
    weight: 5,
  },
  { arbitrary: randomJson, weight: 1 },
);

const callObject: fc.Arbitrary<unknown> = fc.oneof(
  fc.record({ to: address, data: fc.oneof(hexDigits(0, 16).map((h) => `0x${h}`), randomJson) }, { requiredKeys: [] }),
  randomJson,
);

/** Method names: real ones (mostly), case and whitespace variants, random text, non-strings. */
export const knownMethods = [
  'eth_getBlockByNumber',
  'eth_getBlockTransactionCountByNumber',
  'eth_getBalance',
  'eth_getCode',
  'eth_getTransactionCount',
  'eth_call',
  'eth_getStorageAt',
  'eth_getLogs',
  'eth_blockNumber',
  'eth_syncing',
  'eth_gasPrice',
  'eth_maxPriorityFeePerGas',
  'eth_estimateGas',
  'eth_sendRawTransaction',
  'eth_chainId',
  'net_version',
  'web3_clientVersion',
  'eth_getBlockByHash',
  'eth_getTransactionReceipt',
  'eth_subscribe',
] as const;

export const methodName: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.constantFrom(...knownMethods), weight: 12 },
  {
    arbitrary: fc.constantFrom('ETH_GETBALANCE', 'eth_getbalance', 'eth_getBalance ', ' eth_call', 'eth_getLogs\u0000', 'eth_', '__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'isPrototypeOf', 'propertyIsEnumerable', 'toLocaleString', '__defineGetter__', '__lookupSetter__', 'rpc.discover'),
    weight: 2,
  },
  { arbitrary: fc.constant(''), weight: 1 },
  { arbitrary: unicodeString, weight: 2 },
  { arbitrary: fc.string({ minLength: 1000, maxLength: 3000 }), weight: 1 },
  { arbitrary: fc.oneof(fc.integer(), fc.constant(null), fc.boolean(), fc.array(jsonLeaf, { maxLength: 2 }), fc.constant({ name: 'eth_call' })), weight: 1 },
);

/** Params shaped for the method (with mutations), or anything. */
function paramsFor(method: unknown): fc.Arbitrary<unknown> {
  const shaped = (() => {
    switch (method) {
      case 'eth_getBlockByNumber':
        return fc.tuple(blockTag, fc.oneof(fc.boolean(), randomJson)).map((p) => [...p]);
      case 'eth_getBlockTransactionCountByNumber':
        return fc.tuple(blockTag).map((p) => [...p]);
      case 'eth_getBalance':
      case 'eth_getCode':
      case 'eth_getTransactionCount':
        return fc.tuple(address, blockTag).map((p) => [...p]);
      case 'eth_call':
        return fc.tuple(callObject, blockTag).map((p) => [...p]);
      case 'eth_getStorageAt':
        return fc.tuple(address, fc.oneof(hexDigits(1, 64).map((h) => `0x${h}`), randomJson), blockTag).map((p) => [...p]);
      case 'eth_getLogs':
        return fc.tuple(logFilter).map((p) => [...p]);
      default:
        return fc.array(randomJson, { maxLength: 3 });
    }
  })();
  // mutations of a shaped list: drop trailing params, add extra ones
  const mutated = fc
    .tuple(shaped, fc.nat({ max: 3 }), fc.array(randomJson, { maxLength: 2 }))
    .map(([p, drop, extra]) => [...p.slice(0, Math.max(0, p.length - drop)), ...extra]);
  return fc.oneof(
    { arbitrary: shaped, weight: 10 },
    { arbitrary: mutated, weight: 3 },
    { arbitrary: fc.array(randomJson, { maxLength: 5 }), weight: 1 },
    { arbitrary: fc.constant([]), weight: 1 },
    { arbitrary: fc.oneof(randomJson, fc.constantFrom(null, {}, '0x1', 7)), weight: 1 },
    { arbitrary: deepNesting.map((d) => [d]), weight: 1 },
  );
}

// ---------------------------------------------------------------------------------------------
// Requests and batches

const jsonrpcField: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.constant('2.0'), weight: 20 },
  { arbitrary: fc.constantFrom('2', '1.0', '2.0 ', ' 2.0', '2.00', '', 'ＪＳＯＮ', '2.0\u0000', null, true, 2, new Raw('2.0'), [], {}), weight: 2 },
  { arbitrary: unicodeString, weight: 1 },
);

export const idValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.integer({ min: -1000, max: 1_000_000 }), weight: 8 },
  { arbitrary: fc.maxSafeInteger(), weight: 2 },
  { arbitrary: fc.string({ maxLength: 12 }), weight: 5 },
  { arbitrary: unicodeString, weight: 3 },
  { arbitrary: hugeNumberToken, weight: 3 },
  { arbitrary: fc.double(), weight: 1 },
  { arbitrary: fc.constantFrom(0, -1, null, true, false, '', ' ', '0', '1', 'null', '__proto__'), weight: 2 },
  { arbitrary: fc.string({ minLength: 5_000, maxLength: 20_000 }), weight: 1 },
  { arbitrary: fc.oneof(fc.array(jsonLeaf, { maxLength: 3 }), fc.constant({ id: 1 }), randomJson), weight: 1 },
  { arbitrary: deepNesting, weight: 1 },
);

const extraField = fc.tuple(fc.oneof(fc.constantFrom('__proto__', 'constructor', 'result', 'error', 'extra', 'ID', 'Method'), unicodeString), randomJson);

/** A request object: each field kept, dropped, mutated or repeated; random extra fields; random order. */
export const requestObject: fc.Arbitrary<Entries> = methodName.chain((method) =>
  fc
    .record({
      jsonrpc: fc.option(jsonrpcField, { freq: 20, nil: undefined }),
      id: fc.option(idValue, { freq: 20, nil: undefined }),
      method: fc.option(fc.constant(method), { freq: 25, nil: undefined }),
      params: fc.option(paramsFor(method), { freq: 8, nil: undefined }),
      extras: fc.oneof({ arbitrary: fc.constant([]), weight: 6 }, { arbitrary: fc.array(extraField, { maxLength: 3 }), weight: 1 }),
      repeat: fc.oneof({ arbitrary: fc.constant(undefined), weight: 15 }, { arbitrary: fc.tuple(fc.constantFrom('id', 'method', 'jsonrpc', 'params'), randomJson), weight: 1 }),
      shuffle: fc.oneof({ arbitrary: fc.constant(false), weight: 4 }, { arbitrary: fc.constant(true), weight: 1 }),
    })
    .map(({ jsonrpc, id, method: m, params, extras, repeat, shuffle }) => {
      const entries: [string, unknown][] = [];
      if (jsonrpc !== undefined) entries.push(['jsonrpc', jsonrpc]);
      if (id !== undefined) entries.push(['id', id]);
      if (m !== undefined) entries.push(['method', m]);
      if (params !== undefined) entries.push(['params', params]);
      entries.push(...extras);
      if (repeat) entries.push(repeat);
      if (shuffle) entries.reverse();
      return new Entries(entries);
    }),
);

/** A request object that is valid by construction (so the happy paths are reached often). */
export const validRequest = (id: fc.Arbitrary<unknown>): fc.Arbitrary<Entries> =>
  fc.constantFrom(...knownMethods).chain((method) =>
    fc.tuple(id, paramsFor(method).filter(Array.isArray)).map(([i, params]) =>
      new Entries([
        ['jsonrpc', '2.0'],
        ['id', i],
        ['method', method],
        ['params', params],
      ]),
    ),
  );

const batchMember: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: validRequest(fc.integer({ min: 0, max: 1e6 })), weight: 10 },
  { arbitrary: requestObject, weight: 3 },
  { arbitrary: randomJson, weight: 1 },
);

/** Batches: empty, small, near and over limits.batchSize (50), nested, with repeated members. */
export const batch: fc.Arbitrary<unknown[]> = fc.oneof(
  { arbitrary: fc.constant<unknown[]>([]), weight: 1 },
  {
    // mostly unique ids, so some batches get past the parser
    arbitrary: fc
      .tuple(fc.array(batchMember, { minLength: 1, maxLength: 8 }), fc.boolean())
      .map(([members, renumber]) => (renumber ? members.map((m, i) => withId(m, i + 1)) : members)),
    weight: 8,
  },
  {
    arbitrary: fc
      .tuple(fc.array(validRequest(fc.constant(0)), { minLength: 40, maxLength: 62 }), fc.boolean())
      .map(([members, renumber]) => members.map((m, i) => withId(m, renumber ? i + 1 : i % 45))),
    weight: 1,
  },
  { arbitrary: fc.array(fc.array(batchMember, { maxLength: 3 }), { minLength: 1, maxLength: 3 }), weight: 1 },
  {
    arbitrary: fc.tuple(validRequest(fc.nat()), fc.nat({ max: 3 })).map(([m, n]) => Array.from({ length: n + 2 }, () => m)),
    weight: 1,
  },
);

function withId(member: unknown, id: number): unknown {
  if (!(member instanceof Entries)) return member;
  const rest = member.entries.filter(([k]) => k !== 'id');
  return new Entries([...rest, ['id', id]]);
}

// ---------------------------------------------------------------------------------------------
// Bodies

export interface BodySpec {
  bytes: Buffer;
  /** How it was made (for the failure message). */
  kind: string;
}

const jsonBody = (tree: fc.Arbitrary<unknown>, kind: string) =>
  fc.tuple(tree, separator).map(([t, sep]): BodySpec => ({ bytes: Buffer.from(serialize(t, sep), 'utf8'), kind }));

export const body: fc.Arbitrary<BodySpec> = fc.oneof(
  { arbitrary: jsonBody(validRequest(idValue), 'valid-request'), weight: 14 },
  { arbitrary: jsonBody(requestObject, 'request-object'), weight: 14 },
  { arbitrary: jsonBody(batch, 'batch'), weight: 6 },
  { arbitrary: jsonBody(randomJson, 'json-value'), weight: 3 },
  {
    arbitrary: fc.uint8Array({ maxLength: 300 }).map((a): BodySpec => ({ bytes: Buffer.from(a), kind: 'random-bytes' })),
    weight: 2,
  },
  {
    arbitrary: fc
      .oneof(fc.string({ unit: 'binary', maxLength: 200 }), fc.string({ unit: 'grapheme', maxLength: 200 }), fc.constantFrom('', ' ', '\n\t ', 'null', 'true', '1', '"x"', '{}', '[{}]', '[[]]', '{"id":1}'))
      .map((s): BodySpec => ({ bytes: Buffer.from(s, 'utf8'), kind: 'random-text' })),
    weight: 2,
  },
  {
    // truncated JSON: a request cut anywhere
    arbitrary: fc
      .tuple(fc.oneof(validRequest(idValue), requestObject, batch), fc.double({ min: 0, max: 1, noNaN: true }))
      .map(([t, f]): BodySpec => {
        const text = Buffer.from(serialize(t), 'utf8');
        return { bytes: text.subarray(0, Math.floor(text.length * f)), kind: 'truncated' };
      }),
    weight: 2,
  },
  {
    // invalid UTF-8 or a BOM inside otherwise valid JSON
    arbitrary: fc
      .tuple(
        validRequest(fc.oneof(fc.constant('ID'), fc.integer())),
        fc.constantFrom(
          [0xff],
          [0xfe, 0xff],
          [0xc0, 0x80],
          [0xed, 0xa0, 0x80],
          [0xe2, 0x82],
          [0xf4, 0x90, 0x80, 0x80],
          [0x80],
          [0xef, 0xbb, 0xbf],
        ),
        fc.constantFrom('in-id', 'prefix', 'in-method', 'suffix'),
      )
      .map(([req, bad, where]): BodySpec => {
        const text = serialize(req);
        const badBuf = Buffer.from(bad);
        if (where === 'prefix') return { bytes: Buffer.concat([badBuf, Buffer.from(text)]), kind: `bytes-${where}` };
        if (where === 'suffix') return { bytes: Buffer.concat([Buffer.from(text), badBuf]), kind: `bytes-${where}` };
        const key = where === 'in-id' ? '"id":' : '"method":"';
        const at = text.indexOf(key);
        if (at === -1) return { bytes: Buffer.concat([Buffer.from(text), badBuf]), kind: 'bytes-suffix' };
        const cut = at + key.length + (where === 'in-id' ? 0 : 1);
        const prefix = Buffer.from(text.slice(0, cut));
        // in-id: replace the id by a string holding the bad bytes
        if (where === 'in-id') {
          const rest = text.slice(cut).replace(/^("ID"|-?\d+)/, '');
          return { bytes: Buffer.concat([prefix, Buffer.from('"a'), badBuf, Buffer.from('b"'), Buffer.from(rest)]), kind: `bytes-${where}` };
        }
        return { bytes: Buffer.concat([prefix, badBuf, Buffer.from(text.slice(cut))]), kind: `bytes-${where}` };
      }),
    weight: 2,
  },
  {
    arbitrary: deepNesting.map((d): BodySpec => ({ bytes: Buffer.from(d.text), kind: 'deep' })),
    weight: 1,
  },
  {
    // large bodies: just under and over limits.bodyBytes (256 KiB), in a string param or as padding
    arbitrary: fc
      .tuple(fc.constantFrom(200 * 1024, 256 * 1024 - 80, 256 * 1024 + 1, 300 * 1024, 1024 * 1024), fc.constantFrom('param', 'whitespace', 'bytes'))
      .map(([size, how]): BodySpec => {
        if (how === 'bytes') return { bytes: Buffer.alloc(size, 0x61), kind: `large-${how}` };
        if (how === 'whitespace') {
          const text = serialize(new Entries([['jsonrpc', '2.0'], ['id', 'big'], ['method', 'eth_chainId'], ['params', []]]));
          return { bytes: Buffer.from(text + ' '.repeat(Math.max(0, size - text.length))), kind: `large-${how}` };
        }
        const head = '{"jsonrpc":"2.0","id":"big","method":"eth_sendRawTransaction","params":["0x';
        const tail = '"]}';
        return { bytes: Buffer.from(head + 'ab'.repeat(Math.max(0, Math.floor((size - head.length - tail.length) / 2))) + tail), kind: `large-${how}` };
      }),
    weight: 1,
  },
  { arbitrary: fc.constant<BodySpec>({ bytes: Buffer.alloc(0), kind: 'empty' }), weight: 1 },
);

// ---------------------------------------------------------------------------------------------
// Paths, methods, headers

/** A path segment: valid numbers, invalid text, huge, negative, unicode, percent-encoded, latin1. */
export const segment: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom('1', '2', '3'), weight: 6 },
  { arbitrary: fc.constantFrom('0', '01', '4', '5', '1337', '10', '00001'), weight: 2 },
  { arbitrary: fc.constantFrom('abc', '-1', '1.5', '1e3', '+1', '0x1', '%20%31', 'NaN', 'Infinity', '1,2', '1;2', '..', '.'), weight: 2 },
  { arbitrary: fc.constantFrom('4294967297', '18446744073709551617', '9'.repeat(30), '9'.repeat(31), '1'.repeat(400), '-9007199254740993', '1'.repeat(15), '1'.repeat(16)), weight: 1 },
  { arbitrary: fc.constantFrom('%31', '%32', '%2F', '%', '%zz', '%00', '%E0%A5%A7', '%D9%A1', '%EF%BC%91', '%ff', '%C0%B1'), weight: 2 },
  { arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }).map((s) => encodeURIComponent(s)), weight: 1 },
  // raw bytes Node lets through in a path: visible ASCII and latin1, no '/', '?', '#'
  { arbitrary: fc.string({ unit: fc.integer({ min: 0x21, max: 0xff }).filter((c) => ![0x2f, 0x3f, 0x23, 0x25].includes(c)).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: 8 }), weight: 1 },
);

export const path: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom('/rpc/1', '/confirmations/1/rpc/1', '/confirmations/2/rpc/1', '/confirmations/3/rpc/1'), weight: 30 },
  { arbitrary: segment.map((c) => `/rpc/${c}`), weight: 4 },
  { arbitrary: fc.tuple(segment, segment).map(([n, c]) => `/confirmations/${n}/rpc/${c}`), weight: 4 },
  {
    arbitrary: fc
      .tuple(fc.constantFrom('/rpc/1', '/confirmations/2/rpc/1', '/rpc/', '/confirmations//rpc/1'), fc.constantFrom('/', '//', '?', '?x=1', '?chain=2&n=3', '?%zz', '#frag', '/extra', '/..', '/.', ';x'))
      .map(([p, s]) => p + s),
    weight: 4,
  },
  {
    arbitrary: fc.constantFrom(
      '/',
      '/rpc',
      '/rpcs/1',
      '/RPC/1',
      '/Rpc/1',
      '//rpc/1',
      '/rpc//1',
      '/./rpc/1',
      '/x/../rpc/1',
      '/%72pc/1',
      '/confirmations/2',
      '/confirmations/2/rpc',
      '/confirmations/rpc/1',
      '/health',
      '/health/',
      '/chains',
      '/collection.json',
      '/metrics',
      '/favicon.ico',
      '/api/pending-transactions-missing-relay',
      '/graphql',
      '*',
    ),
    weight: 4,
  },
  { arbitrary: fc.array(segment, { minLength: 1, maxLength: 4 }).map((s) => `/${s.join('/')}`), weight: 2 },
);

export const httpMethod = fc.oneof(
  { arbitrary: fc.constant('POST'), weight: 40 },
  { arbitrary: fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'), weight: 5 },
  { arbitrary: fc.constantFrom('post', 'PROPFIND', 'TRACE', 'PURGE'), weight: 1 },
);

const visibleAscii = fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c));
const headerSafe = fc.integer({ min: 0x20, max: 0xff }).filter((c) => c < 0x7f || c > 0x9f).map((c) => String.fromCharCode(c));

/** X-Request-Id values (undefined: not sent). */
export const requestIdHeader: fc.Arbitrary<string | string[] | undefined> = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 6 },
  { arbitrary: fc.string({ unit: visibleAscii, minLength: 1, maxLength: 40 }), weight: 5 },
  { arbitrary: fc.constantFrom('a', 'x'.repeat(200), 'x'.repeat(201), '\\u00e9\\ud83d', '"quoted"', '{"id":1}', '<script>', 'a,b'), weight: 2 },
  { arbitrary: fc.string({ unit: visibleAscii, minLength: 150, maxLength: 400 }), weight: 1 },
  { arbitrary: fc.string({ unit: headerSafe, maxLength: 30 }), weight: 2 },
  { arbitrary: fc.constantFrom('', ' ', ' abc', 'abc ', '\tabc', 'a b', 'é', 'x\u00ff'), weight: 1 },
  { arbitrary: fc.array(fc.string({ unit: visibleAscii, minLength: 1, maxLength: 10 }), { minLength: 1, maxLength: 3 }), weight: 1 },
);

export const contentType: fc.Arbitrary<string | undefined> = fc.oneof(
  { arbitrary: fc.constant('application/json'), weight: 10 },
  {
    arbitrary: fc.constantFrom(
      undefined,
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/json; charset=latin1',
      'application/json; charset=utf-16',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonrequest',
      '',
      '*/*',
      'application/json;;;',
    ),
    weight: 3,
  },
);

export interface FuzzRequest {
  method: string;
  path: string;
  body: BodySpec;
  /** Send the body in this many writes (chunked transfer encoding), or in one go (0). */
  chunks: number;
  /** Reuse a kept-alive connection (so a request that was answered early must not desync the next). */
  keepAlive: boolean;
  headers: Record<string, string | string[]>;
}

export const fuzzRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({
    method: httpMethod,
    path,
    body,
    chunks: fc.oneof({ arbitrary: fc.constant(0), weight: 6 }, { arbitrary: fc.integer({ min: 2, max: 5 }), weight: 1 }),
    contentType,
    requestId: requestIdHeader,
    encoding: fc.oneof({ arbitrary: fc.constant(undefined), weight: 30 }, { arbitrary: fc.constantFrom('gzip', 'identity', 'br, gzip'), weight: 1 }),
    keepAlive: fc.oneof({ arbitrary: fc.constant(false), weight: 3 }, { arbitrary: fc.constant(true), weight: 1 }),
  })
  .map(({ method, path: p, body: b, chunks, contentType: ct, requestId, encoding, keepAlive }) => {
    const headers: Record<string, string | string[]> = {};
    if (ct !== undefined) headers['content-type'] = ct;
    if (requestId !== undefined) headers['x-request-id'] = requestId;
    if (encoding !== undefined) headers['content-encoding'] = encoding;
    return { method, path: p, body: b, chunks, keepAlive, headers };
  });

// ---------------------------------------------------------------------------------------------
// Upstream answers (test/integration/balancer/fuzz-upstream.test.ts)

/**
 * Results an upstream may answer with, as exact JSON texts. Semantically distinct two by two, yet
 * several pairs look equal to a lossy comparison (a double, the last of duplicate keys, -0):
 * a gateway that confirmed one with the other would vouch for a value N upstreams did not send.
 */
export const resultPool: readonly string[] = [
  '"0x10"',
  '"0x11"',
  '12345678901234567890',
  '12345678901234567891',
  '1e400',
  'null',
  '1.0',
  '1',
  '-0',
  '0',
  '{"x":2}',
  '{"x":1,"x":2}',
  '[1,2]',
];

/** What one upstream does with every call of one property run. */
export type UpstreamAnswerSpec =
  | { kind: 'pool'; result: string }
  | { kind: 'random-json'; text: string }
  | { kind: 'bytes'; bytes: Uint8Array }
  | { kind: 'deep'; depth: number }
  | { kind: 'truncated'; result: string; keep: number }
  | { kind: 'wrong-id'; result: string; id: 'string' | 'other' | 'null' | 'missing' }
  | { kind: 'duplicate-result'; first: string; second: string }
  | { kind: 'huge-header'; result: string }
  | { kind: 'status'; status: number; result: string }
  | { kind: 'die-mid-body'; result: string }
  | { kind: 'hang' };

/**
 * The pool without the pairs only a lossless comparison tells apart (for checking the rest of
 * the property against a gateway whose comparison is still lossy).
 */
export const plainResultPool: readonly string[] = ['"0x10"', '"0x11"', '12345678901234567890', 'null', '1', '0', '{"x":2}', '[1,2]'];

/** One upstream's behaviour for a run, its results drawn from `pool`. */
export const upstreamAnswerFrom = (pool: readonly string[], duplicateKeys = true): fc.Arbitrary<UpstreamAnswerSpec> => {
  // the first result more often than the others, so that upstreams often agree
  const poolResult = fc.oneof({ arbitrary: fc.constant(pool[0]!), weight: 2 }, { arbitrary: fc.constantFrom(...pool), weight: 3 });
  return fc.oneof(
  // agreement must be frequent for the property to test confirmations: most answers come from the pool
  { arbitrary: poolResult.map((result) => ({ kind: 'pool' as const, result })), weight: 60 },
  { arbitrary: randomJson.map((v) => ({ kind: 'random-json' as const, text: serialize(v) })), weight: 2 },
  { arbitrary: fc.uint8Array({ maxLength: 200 }).map((bytes) => ({ kind: 'bytes' as const, bytes })), weight: 2 },
  { arbitrary: fc.integer({ min: 100, max: 100_000 }).map((depth) => ({ kind: 'deep' as const, depth })), weight: 2 },
  { arbitrary: fc.tuple(poolResult, fc.double({ min: 0, max: 1, noNaN: true })).map(([result, keep]) => ({ kind: 'truncated' as const, result, keep })), weight: 2 },
  {
    arbitrary: fc.tuple(poolResult, fc.constantFrom('string' as const, 'other' as const, 'null' as const, 'missing' as const)).map(([result, id]) => ({ kind: 'wrong-id' as const, result, id })),
    weight: 3,
  },
  { arbitrary: fc.tuple(poolResult, poolResult).map(([first, second]) => ({ kind: 'duplicate-result' as const, first, second })), weight: duplicateKeys ? 3 : 0 },
  { arbitrary: poolResult.map((result) => ({ kind: 'huge-header' as const, result })), weight: 1 },
  { arbitrary: fc.tuple(fc.constantFrom(204, 301, 404, 429, 500, 503), poolResult).map(([status, result]) => ({ kind: 'status' as const, status, result })), weight: 1 },
  { arbitrary: poolResult.map((result) => ({ kind: 'die-mid-body' as const, result })), weight: 1 },
  { arbitrary: fc.constant({ kind: 'hang' as const }), weight: 1 },
  );
};

export const upstreamAnswer = upstreamAnswerFrom(resultPool);
