/**
 * POST/GET /graphql refusals made before any query (no database is reached): a query that does
 * not parse, an unknown field, a depth over graphqlMaxDepth, another method; GraphiQL for a
 * browser only when enabled.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import test from 'ava';
import { createApiContext, type IndexerApiOptions } from '../../../../../lib/indexer/context.js';
import type { IndexerDb } from '../../../../../lib/indexer/db/pool.js';
import { graphqlHandler, maxQueryNesting, maxQueryTokens, nestsDeeperThan } from '../../../../../lib/indexer/graphql/endpoint.js';
import { send } from '../../../../support/gateway.js';
import { serveHandler } from '../../../../support/stage.js';

let reached = 0;
const db = new Proxy({}, { get: () => { reached += 1; throw new Error('the database was reached'); } }) as unknown as IndexerDb;

async function request(method: string, body: string | undefined, headers: Record<string, string>, options: IndexerApiOptions = {}) {
  const handler = graphqlHandler(createApiContext(db, options));
  const server = await serveHandler((req: IncomingMessage, res: ServerResponse) => {
    handler(req, res).catch(() => res.writeHead(500).end());
  });
  try {
    return await send(server.url, method, '/graphql', body, headers);
  } finally {
    await server.close();
  }
}
const post = (query: string, options?: IndexerApiOptions) => request('POST', JSON.stringify({ query }), { 'content-type': 'application/json' }, options);

test.serial('should refuse a query that does not parse, or asks a field the schema lacks, with 400', async (t) => {
  const syntax = await post('{ disputes(');
  t.is(syntax.status, 400);
  t.regex(syntax.body.errors[0].message, /Syntax Error/);
  const unknown = await post('{ noSuchField }');
  t.is(unknown.status, 400);
  t.regex(unknown.body.errors[0].message, /noSuchField/);
  t.is(reached, 0);
});

test.serial('should refuse a query nested deeper than graphqlMaxDepth', async (t) => {
  const deep = await post('{ disputes { Bridge { transactionId } } }', { graphqlMaxDepth: 2 });
  t.is(deep.status, 400);
  t.regex(JSON.stringify(deep.body.errors), /depth/i);
  t.is(reached, 0);
});

test.serial('should refuse a query of more tokens than the bound before reading it further, and take one just within it', async (t) => {
  // 4 tokens per repetition (`a: __typename` is 3, plus the braces once): one repetition over the bound is refused
  const query = (fields: number) => `{ ${Array.from({ length: fields }, (_, i) => `f${i}: __typename`).join(' ')} }`;
  const over = await post(query(Math.ceil(maxQueryTokens / 3)));
  t.is(over.status, 400);
  t.is(over.body.errors[0].extensions.code, 'QUERY_TOO_LARGE');
  t.is(over.body.errors[0].extensions.maxTokens, maxQueryTokens);
  t.regex(over.body.errors[0].message, /more than 5000 tokens/);
  // Within the bound, the query is read and validated (and answered: __typename needs no database).
  const within = await post(query(Math.floor((maxQueryTokens - 3) / 3)));
  t.is(within.status, 200, JSON.stringify(within.body).slice(0, 300));
  t.is(within.body.data.f0, 'Query');
  t.is(reached, 0);
});

test.serial('should refuse a query nesting brackets deeper than the bound as QUERY_TOO_DEEP, strings and comments aside', async (t) => {
  const deep = await post(`{ transaction(id: ${'{a: '.repeat(maxQueryNesting)}1${'}'.repeat(maxQueryNesting)}) { __typename } }`);
  t.is(deep.status, 400);
  t.is(deep.body.errors[0].extensions.code, 'QUERY_TOO_DEEP');
  t.is(reached, 0);
});

test('nestsDeeperThan: counts {, [ and ( outside strings, block strings and comments', (t) => {
  t.false(nestsDeeperThan('{ a { b } }', 2));
  t.true(nestsDeeperThan('{ a { b(x: [1]) } }', 3));
  t.false(nestsDeeperThan('{ a(x: "{{{{[[[[((((") }', 2));
  t.false(nestsDeeperThan('{ a(x: "\\"{{{{") }', 2), 'an escaped quote does not end the string');
  t.false(nestsDeeperThan('{ a(x: """ {{{{ \\""" {{{{ """) }', 2), 'an escaped triple quote does not end the block string');
  t.false(nestsDeeperThan('{ a # {{{{{{\n }', 1));
  t.true(nestsDeeperThan('{ a # {{{{{{\n { { } } }', 2), 'a comment ends at its line');
  t.true(nestsDeeperThan('{ a(x: "") { b { c } } }', 2), 'an empty string ends');
});

test.serial('should refuse another method than GET and POST', async (t) => {
  const put = await request('PUT', JSON.stringify({ query: '{ disputes { cursor } }' }), { 'content-type': 'application/json' });
  t.is(put.status, 405);
  t.is(reached, 0);
});

test.serial('should serve GraphiQL to a browser only when enabled', async (t) => {
  const page = await request('GET', undefined, { accept: 'text/html' });
  t.is(page.status, 200);
  t.regex(String(page.headers['content-type']), /^text\/html/);
  t.regex(page.text, /graphiql/i);
  const off = await request('GET', undefined, { accept: 'text/html' }, { graphiql: false });
  t.not(off.status, 200);
  t.is(reached, 0);
});

test.serial('should mask a database password in a resolver error\'s message and stack, in development too', async (t) => {
  // The stack opens with the message: masking only the message left the password in the stack.
  const leaky = new Proxy({}, { get: () => { throw new Error('pool at postgres://reader:hunter2pw@db.internal/index failed'); } }) as unknown as IndexerDb;
  const logged: unknown[] = [];
  const logger = { error: (o: unknown) => logged.push(o), warn: (o: unknown) => logged.push(o), info: () => {}, debug: () => {} } as unknown as NonNullable<IndexerApiOptions['logger']>;
  const handler = graphqlHandler(createApiContext(leaky, { nodeEnv: 'development', logger }));
  const server = await serveHandler((req: IncomingMessage, res: ServerResponse) => {
    handler(req, res).catch(() => res.writeHead(500).end());
  });
  t.teardown(() => server.close());
  const res = await send(server.url, 'POST', '/graphql', JSON.stringify({ query: '{ disputes(limit: 1) { cursor } }' }), { 'content-type': 'application/json' });
  t.is(res.body.errors[0].extensions.code, 'INTERNAL', res.text);
  t.regex(res.body.errors[0].extensions.stack, /^Error: pool at postgres:\/\/reader:\*\*\*@db\.internal\/index failed\n/);
  t.false(res.text.includes('hunter2pw'), res.text);
  t.true(logged.length > 0);
  t.false(JSON.stringify(logged).includes('hunter2pw'), JSON.stringify(logged));
});
