import test from 'ava';
import { parse, validate } from 'graphql';
import { depthLimitRule, operationCost, operationQueries, selectionDepth } from '../../../../../lib/indexer/graphql/limits.js';
import { buildIndexerSchema } from '../../../../../lib/indexer/graphql/schema.js';

const schema = buildIndexerSchema();
const settings = { listFields: new Set(['disputes', 'recentInvalidRelays']), defaultLimit: 100, maxLimit: 1000 };

function depth(query: string): number {
  const doc = parse(query);
  const op = doc.definitions.find((d) => d.kind === 'OperationDefinition');
  const fragments = new Map(doc.definitions.flatMap((d) => (d.kind === 'FragmentDefinition' ? [[d.name.value, d] as const] : [])));
  return selectionDepth((op as { selectionSet: Parameters<typeof selectionDepth>[0] }).selectionSet, (n) => fragments.get(n));
}

test('depth counts nested selections, follows fragments, skips introspection', (t) => {
  t.is(depth('{ disputes { cursor } }'), 2);
  t.is(depth('{ disputes { Bridge { transactionId } } }'), 3);
  t.is(depth('{ disputes { ...f } } fragment f on ActiveDispute { Bridge { transactionId } }'), 3);
  t.is(depth('{ disputes { ... on ActiveDispute { Bridge { transactionId } } } }'), 3);
  t.is(depth('{ __schema { types { fields { type { ofType { ofType { name } } } } } } }'), 0);
  t.is(depth('{ a: disputes { cursor } b: transaction(id: "x") { Bridge { transactionId } } }'), 3);
});

test('the depth rule reports operations deeper than the maximum', (t) => {
  const ok = validate(schema, parse('{ disputes { Bridge { transactionId } } }'), [depthLimitRule(3)]);
  t.deepEqual(ok, []);
  const deep = validate(schema, parse('{ disputes { Bridge { transactionId } } }'), [depthLimitRule(2)]);
  t.is(deep.length, 1);
  t.is(deep[0]?.extensions.code, 'QUERY_TOO_DEEP');
  t.regex(deep[0]!.message, /depth 3 exceeds the maximum of 2/);
});

test('cost is the sum of list limits (defaults, literals, variables) plus one per other root field', (t) => {
  const cost = (q: string, vars: Record<string, unknown> = {}, name?: string) => operationCost(parse(q), name, vars, settings);
  t.is(cost('{ disputes { cursor } }'), 100);
  t.is(cost('{ disputes(limit: 7) { cursor } recentInvalidRelays(limit: 3) { cursor } }'), 10);
  t.is(cost('query($n: Int) { disputes(limit: $n) { cursor } }', { n: 40 }), 40);
  t.is(cost('query($n: Int) { disputes(limit: $n) { cursor } }', {}), 100);
  t.is(cost('{ disputes(limit: 5000) { cursor } }'), 1000, 'out-of-range counts as the maximum');
  t.is(cost('{ ...q } fragment q on Query { disputes(limit: 2) { cursor } ... on Query { recentInvalidRelays(limit: 3) { cursor } } }'), 5);
  t.is(cost('{ transaction(id: "x") { Bridge { transactionId } } __typename }'), 1);
  t.is(cost('query A { disputes(limit: 1) { cursor } } query B { disputes(limit: 9) { cursor } }', {}, 'B'), 9);
  t.is(cost('query A { disputes { cursor } } query B { disputes { cursor } }'), 0, 'ambiguous operation: execution reports it');
});

test('a fragment spread many times is walked once: depth and cost of a 2^60-field operation come at once', (t) => {
  const frags: string[] = [];
  for (let i = 0; i < 60; i++) frags.push(`fragment F${i} on Query { ...F${i + 1} ... on Query { ...F${i + 1} } }`);
  frags.push('fragment F60 on Query { disputes(limit: 2) { Bridge { transactionId } } }');
  const query = `{ ...F0 }\n${frags.join('\n')}`;
  t.is(depth(query), 3);
  t.is(operationCost(parse(query), undefined, {}, settings), 2 * 2 ** 60);
  t.deepEqual(validate(schema, parse(query), [depthLimitRule(3)]), []);
  t.is(validate(schema, parse(query), [depthLimitRule(2)])[0]?.extensions.code, 'QUERY_TOO_DEEP');
});

test('a fragment cycle ends the walk (the spec rule reports it)', (t) => {
  const query = '{ ...A } fragment A on Query { disputes(limit: 3) { cursor } ...B } fragment B on Query { ...A disputes(limit: 4) { cursor } }';
  t.is(depth(query), 2);
  t.is(operationCost(parse(query), undefined, {}, settings), 7);
});

test('queries: one per list or lookup field, aliases, fragments and inline fragments counted; other fields free', (t) => {
  const fields = new Set(['disputes', 'transaction']);
  const queries = (q: string, name?: string) => operationQueries(parse(q), name, fields);
  t.is(queries('{ disputes { cursor } stats { generatedAt } __typename }'), 1);
  t.is(queries('{ a: disputes { cursor } b: disputes { cursor } t: transaction(id: "x") { __typename } }'), 3);
  t.is(queries('{ ...f ... on Query { ...f } } fragment f on Query { disputes { cursor } transaction(id: "x") { __typename } }'), 4);
  t.is(queries('query A { disputes { cursor } } query B { a: disputes { cursor } b: disputes { cursor } }', 'B'), 2);
  const frags: string[] = [];
  for (let i = 0; i < 60; i++) frags.push(`fragment F${i} on Query { ...F${i + 1} ...F${i + 1} }`);
  frags.push('fragment F60 on Query { disputes { cursor } }');
  t.is(queries(`{ ...F0 }\n${frags.join('\n')}`), 2 ** 60);
});
