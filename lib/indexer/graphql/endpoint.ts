/**
 * GraphQL at /graphql through express-graphql 0.12 (graphql 16). Resolvers are thin: they
 * validate arguments with the REST validator and call the same query functions as the REST
 * routes. express-graphql's GraphiQL page is self-contained (React, GraphiQL and its CSS are
 * inlined in the HTML), so it works with no internet access.
 *
 * Status codes: express-graphql answers 400 for syntax/validation errors, the depth rule and the
 * cost check; we additionally answer 503 (with Retry-After) when a resolver hit an unavailable
 * database, and 400 when the only errors are the client's (invalid arguments, variables that do
 * not fit their types, an unknown operation name). express-graphql's own refusals of a request
 * (no query, a body that is not JSON, 405, 415) keep their message. Unexpected errors are masked
 * outside development.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { graphqlHTTP } from 'express-graphql';
import {
  GraphQLError, execute, getOperationAST, getVariableValues, parse,
  type DocumentNode, type ExecutionArgs, type ExecutionResult, type GraphQLFormattedError, type Source,
} from 'graphql';
import { LIST_ROUTES } from '../catalog.js';
import type { ApiContext } from '../context.js';
import { isDatabaseUnavailable } from '../db/errors.js';
import { redactCredentials } from '../../upstream/redact.js';
import { IndexerError, InvalidParameterError } from '../../errors.js';
import { depthLimitRule, operationCost, operationQueries } from './limits.js';
import { buildIndexerSchema } from './schema.js';
import { parseListParams, parseTransactionKey, type ListParameter, type RawValue } from '../read/params.js';
import { findTransaction, runList } from '../read/queries.js';

const DEFAULT_QUERY = `# omnigate indexer API. Press the run button (or Ctrl-Enter).
# Each item's cursor can be passed back as "cursor" to get the next page.
{
  pendingTransactionsMissingRelay(limit: 5) {
    cursor
    Bridge { transactionId originChain destChain originAmountFormatted sendChainGas }
    BridgeRequest { blockNumber blockTimestamp transactionHash }
  }
}
`;

function rootValue(ctx: ApiContext): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const route of LIST_ROUTES) {
    root[route.graphqlField] = async (args: Partial<Record<ListParameter, RawValue>>) => {
      const filter = parseListParams(args, ctx.limits);
      const page = await runList(ctx.db, route.query, filter, ctx.queryContext());
      return page.items.map((item, i) => ({ ...item, cursor: page.cursors[i] }));
    };
  }
  root.stats = () => ctx.ops.stats.get();
  root.status = () => ctx.ops.status.get();
  root.transaction = (args: { id: string }) => findTransaction(ctx.db, parseTransactionKey('id', args.id), ctx.layouts);
  root.transactionById = async (args: { transactionId: string }) => {
    const found = await findTransaction(ctx.db, parseTransactionKey('transactionId', args.transactionId), ctx.layouts);
    return found ? [found] : [];
  };
  return root;
}

/** The status of an http-errors error express-graphql raised for a bad HTTP request (4xx, exposed); else undefined. */
function clientHttpStatus(err: Error): number | undefined {
  const { status, expose } = err as Error & { status?: unknown; expose?: unknown };
  return typeof status === 'number' && status >= 400 && status < 500 && expose === true ? status : undefined;
}

/**
 * Whether an error of an execution result is the client's: an invalid argument, or one GraphQL
 * raised about the request itself before running any field (a variable of the wrong type or
 * missing, an unknown or ambiguous operation name, an operation type the schema lacks). Those
 * have no path; every error raised while a field ran (resolver failures, null checks) has one.
 */
const isClientError = (e: GraphQLError) => e.path === undefined || e.originalError instanceof InvalidParameterError;

function formatError(ctx: ApiContext) {
  return (error: GraphQLError): GraphQLFormattedError => {
    const formatted = error.toJSON();
    const original = error.originalError;
    if (!original || original instanceof GraphQLError) return formatted;
    if (original instanceof InvalidParameterError) {
      return { ...formatted, extensions: { ...formatted.extensions, code: 'BAD_USER_INPUT', parameter: original.parameter } };
    }
    const httpStatus = clientHttpStatus(original);
    if (httpStatus !== undefined) {
      // express-graphql's own refusal of the HTTP request (no query, a body that is not JSON, an
      // unsupported content type or method): its message is the answer, nothing to log.
      return { ...formatted, extensions: { ...formatted.extensions, code: 'BAD_REQUEST' } };
    }
    if (original instanceof IndexerError && original.code === 'INDEX_NOT_READY') {
      // The indexer has not created its tables yet (layout.ts); logged once by the layout resolver.
      return { ...formatted, message: original.message, extensions: { code: original.code } };
    }
    if (isDatabaseUnavailable(original) || (original instanceof IndexerError && original.status === 503)) {
      ctx.logger.warn({ err: { name: original.name, message: redactCredentials(original.message) }, path: error.path }, 'graphql: database unavailable');
      return {
        ...formatted,
        message: 'The database is unavailable or did not answer in time',
        extensions: { code: 'DATABASE_UNAVAILABLE', ...(ctx.dev ? { cause: redactCredentials(original.message) } : {}) },
      };
    }
    if (original instanceof IndexerError && original.expose) {
      return { ...formatted, extensions: { ...formatted.extensions, code: original.code } };
    }
    // The stack's first line is the message: masked as the message is.
    const stack = original.stack === undefined ? undefined : redactCredentials(original.stack);
    ctx.logger.error({ err: { name: original.name, message: redactCredentials(original.message), stack }, path: error.path }, 'graphql resolver failed');
    if (ctx.dev) {
      return { ...formatted, message: redactCredentials(original.message), extensions: { code: 'INTERNAL', stack } };
    }
    return { ...formatted, message: 'Internal server error', extensions: { code: 'INTERNAL' } };
  };
}

/**
 * Tokens a query may hold (graphql's `maxTokens`): the introspection query GraphiQL sends holds
 * a few hundred, a full dashboard a couple of thousand. Reading and validating a query costs the
 * event loop in proportion to its tokens (a 100 kB body of one field repeated held it for hundreds
 * of ms); past the bound the parser stops at once: a 400 `QUERY_TOO_LARGE`.
 */
export const maxQueryTokens = 5_000;

/**
 * Brackets (`{`, `[`, `(`) a query may nest before it is parsed: far above any query the depth
 * rule lets run (6 levels of selections, a few of arguments), far below what overflows graphql's
 * recursive parser (a couple of thousand).
 */
export const maxQueryNesting = 100;

/**
 * The query's document: a query nested deeper than `maxQueryNesting` (graphql's parser descends
 * once per level and would overflow the stack with a RangeError, which express-graphql passes on
 * as a 500) is a 400 `QUERY_TOO_DEEP`, a query of more than `maxQueryTokens` a 400
 * `QUERY_TOO_LARGE`: the client's, before the parser runs far.
 */
function parseQuery(source: Source): DocumentNode {
  const tooDeep = () =>
    new GraphQLError(`Syntax Error: the query is nested too deeply to be read (more than ${maxQueryNesting} brackets)`, {
      source, positions: [0], extensions: { code: 'QUERY_TOO_DEEP', maxNesting: maxQueryNesting },
    });
  if (nestsDeeperThan(source.body, maxQueryNesting)) throw tooDeep();
  try {
    return parse(source, { maxTokens: maxQueryTokens });
  } catch (err) {
    // (a stack smaller than the bound assumes: still the client's)
    if (err instanceof RangeError) throw tooDeep();
    if (err instanceof GraphQLError && /contains more th\w+ \d+ tokens/.test(err.message)) {
      throw new GraphQLError(`Syntax Error: the query holds more than ${maxQueryTokens} tokens`, {
        source, positions: [0], extensions: { code: 'QUERY_TOO_LARGE', maxTokens: maxQueryTokens },
      });
    }
    throw err;
  }
}

/**
 * Whether `text` nests `{`, `[` and `(` deeper than `limit`, outside strings ("…" with escapes,
 * """…""" block strings) and comments (# to the end of the line), as GraphQL's lexer reads them.
 * Unbalanced brackets are left to the parser.
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x7b || c === 0x5b || c === 0x28) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d || c === 0x29) {
      if (depth > 0) depth -= 1;
    } else if (c === 0x23) {
      while (i + 1 < text.length && text.charCodeAt(i + 1) !== 0x0a && text.charCodeAt(i + 1) !== 0x0d) i++;
    } else if (c === 0x22) {
      if (text.startsWith('""', i + 1)) {
        // a block string ends at the next """ not escaped as \"""
        let end = i + 3;
        for (;;) {
          end = text.indexOf('"""', end);
          if (end < 0) return false; // unterminated: the parser's error
          if (text[end - 1] === '\\') end += 3;
          else break;
        }
        i = end + 2;
      } else {
        for (i += 1; i < text.length; i++) {
          const d = text.charCodeAt(i);
          if (d === 0x5c) i += 1;
          else if (d === 0x22 || d === 0x0a || d === 0x0d) break;
        }
      }
    }
  }
  return false;
}

function executeWithLimits(ctx: ApiContext, response: ServerResponse) {
  const listFields = new Set(LIST_ROUTES.map((r) => r.graphqlField));
  const queryFields = new Set([...listFields, 'transaction', 'transactionById']);
  return async (args: ExecutionArgs): Promise<ExecutionResult> => {
    const op = getOperationAST(args.document, args.operationName);
    const coerced = op
      ? getVariableValues(args.schema, op.variableDefinitions ?? [], (args.variableValues ?? {}) as Record<string, unknown>)
      : undefined;
    if (coerced && 'coerced' in coerced && coerced.coerced) {
      const cost = operationCost(args.document, args.operationName, coerced.coerced, { listFields, ...ctx.limits });
      if (cost > ctx.graphqlMaxCost) {
        // express-graphql turns an error thrown here into a 400 with this error in `errors`.
        throw new GraphQLError(
          `Query cost ${cost} exceeds the maximum of ${ctx.graphqlMaxCost} (cost = the sum of the limit of every list field, 1 per transaction lookup)`,
          { extensions: { code: 'QUERY_TOO_COSTLY', cost, maxCost: ctx.graphqlMaxCost } },
        );
      }
    }
    const queries = operationQueries(args.document, args.operationName, queryFields);
    if (queries > ctx.graphqlMaxQueries) {
      throw new GraphQLError(
        `The operation runs ${queries} database queries, more than the maximum of ${ctx.graphqlMaxQueries} (one per list or transaction lookup field, aliases included)`,
        { extensions: { code: 'TOO_MANY_QUERIES', queries, maxQueries: ctx.graphqlMaxQueries } },
      );
    }
    const result = await execute(args);
    const errors = result.errors ?? [];
    const originals = errors.map((e) => e.originalError);
    if (originals.some((e) => e !== undefined && (isDatabaseUnavailable(e) || (e instanceof IndexerError && e.status === 503)))) {
      response.statusCode = 503;
      response.setHeader('Retry-After', '5');
    } else if (errors.length > 0 && errors.every(isClientError)) {
      // Otherwise express-graphql answers 500 whenever data is null (e.g. a variable of the wrong
      // type), and 200 for an invalid argument of a nullable field.
      response.statusCode = 400;
    }
    return result;
  };
}

export function graphqlHandler(ctx: ApiContext): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const schema = buildIndexerSchema();
  const root = rootValue(ctx);
  const validationRules = [depthLimitRule(ctx.graphqlMaxDepth)];
  const customFormatErrorFn = formatError(ctx);
  const middleware = graphqlHTTP((_request, response) => ({
    schema,
    rootValue: root,
    graphiql: ctx.graphiql ? { defaultQuery: DEFAULT_QUERY, headerEditorEnabled: true } : false,
    validationRules,
    customParseFn: parseQuery,
    customFormatErrorFn,
    customExecuteFn: executeWithLimits(ctx, response),
    pretty: ctx.dev,
  }));
  return async (req, res) => {
    await middleware(req as IncomingMessage & { url: string }, res);
  };
}
