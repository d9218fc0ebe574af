/**
 * The OpenAPI 3.1 document of every HTTP route the indexer serves, generated from the same
 * catalogue as the routes (catalog.ts) so the two cannot disagree. The schemas of the bridge, its
 * events and its decoded request come from their field tables (read/fields.ts), like types.ts and
 * the GraphQL schema.
 */
import { LIST_ROUTES } from '../catalog.js';
import { DEFAULT_LIMIT, MAX_INT4, MAX_LIMIT, type LimitSettings } from '../read/params.js';
import { NEXT_CURSOR_HEADER } from './routes.js';
import {
  BRIDGE_FIELDS, CLAIM_FIELDS, DECODED_REQUEST_FIELDS, DISPUTE_FIELDS, INVALID_RELAY_FIELDS, openApiPropertiesOf, PROOF_FIELDS,
  REFUND_FIELDS, RELAY_FIELDS, REQUEST_FIELDS, TRANSACTION_REF_FIELDS,
} from '../read/fields.js';

export const API_VERSION = '1.0.0';

type Schema = Record<string, unknown>;
const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
const str = (description?: string, extra: Schema = {}): Schema => ({ type: 'string', ...(description ? { description } : {}), ...extra });
const int = (description?: string, extra: Schema = {}): Schema => ({ type: 'integer', ...(description ? { description } : {}), ...extra });

function object(properties: Record<string, Schema>, description?: string, optional: string[] = []): Schema {
  return {
    type: 'object',
    ...(description ? { description } : {}),
    properties,
    required: Object.keys(properties).filter((k) => !optional.includes(k)),
  };
}

const AGE = int("Seconds from the timestamp the list is ordered by to now (0 for a time ahead of the server's clock).", { minimum: 0 });

function schemas(): Record<string, Schema> {
  const bridge = object(openApiPropertiesOf(BRIDGE_FIELDS), 'The bridge as requested on the origin chain.');
  const listItem = (description: string, phases: string[]): Schema => object({
    ageSeconds: AGE,
    Bridge: ref('Bridge'),
    BridgeRequest: ref('BridgeRequest'),
    ...Object.fromEntries(phases.map((p) => [p, ref(p)])),
  }, description);
  return {
    Bridge: bridge,
    DecodedRequest: object(openApiPropertiesOf(DECODED_REQUEST_FIELDS),
      'The bridge a request encodes. 256-bit integers are exact decimal strings.'),
    StageStat: object({
      stage: str(undefined, { enum: ['missingRelay', 'exceedDeadline', 'missingProof', 'missingClaim', 'disputed'] }),
      originChainId: int(),
      destChainId: { type: ['integer', 'null'], description: 'Null for a dispute whose request row is missing.' },
      count: int('Items in the stage on this pair.', { minimum: 1 }),
      oldestAgeSeconds: int('Seconds since the oldest of them entered the stage.'),
    }, 'One stage on one origin → destination pair.'),
    Stats: object({
      generatedAt: int('Unix seconds the snapshot was computed at (ages are relative to it).'),
      stages: { type: 'array', items: ref('StageStat'), description: 'Pairs with at least one item, by stage then pair.' },
    }, 'Counts and oldest age per stage and chain pair.'),
    ChainStatus: object({
      chainId: { type: ['integer', 'null'] },
      chain: str('Chain name.'),
      latestBlock: { type: ['string', 'null'], pattern: '^[0-9]+$', description: 'Latest indexed block, exact decimal string.' },
      latestTimestamp: { type: ['integer', 'null'], description: 'Its time, unix seconds.' },
      ageSeconds: { type: ['integer', 'null'], description: 'Seconds since latestTimestamp.' },
      finalizedBlock: { type: ['string', 'null'], pattern: '^[0-9]+$', description: 'Finalized block, where Ponder records it.' },
      finalizedTimestamp: { type: ['integer', 'null'] },
      ready: { type: ['boolean', 'null'], description: "Ponder's readiness flag, where it records one." },
    }, 'How far the index has come on one chain.'),
    IndexerStatus: object({
      generatedAt: int('Unix seconds.'),
      source: str('Where the positions come from.', { enum: ['ponder_checkpoint', 'ponder_status', 'ponder_meta', 'events'] }),
      chains: { type: 'array', items: ref('ChainStatus') },
    }, 'Latest indexed position per chain.'),
    TransactionRef: object(openApiPropertiesOf(TRANSACTION_REF_FIELDS), 'A transactionId alone.'),
    BridgeRequest: object(openApiPropertiesOf(REQUEST_FIELDS), 'The BridgeRequested event on the origin chain.'),
    BridgeRelay: object(openApiPropertiesOf(RELAY_FIELDS), 'The BridgeRelayed event on the destination chain.'),
    BridgeProof: object(openApiPropertiesOf(PROOF_FIELDS), 'The BridgeProofProvided event (the latest proof).'),
    BridgeClaim: object(openApiPropertiesOf(CLAIM_FIELDS), 'The BridgeDepositClaimed event.'),
    BridgeRefund: object(openApiPropertiesOf(REFUND_FIELDS), 'The BridgeDepositRefunded event.'),
    BridgeDispute: object(openApiPropertiesOf(DISPUTE_FIELDS), 'The BridgeProofDisputed event (the latest dispute).'),
    PendingTransactionMissingRelay: listItem('A bridge with no relay, refund, active proof or claim.', []),
    PendingTransactionMissingProof: listItem('A relayed bridge with no active proof, not refunded or claimed.', ['BridgeRelay']),
    PendingTransactionMissingClaim: {
      ...listItem('A bridge with an active proof, no claim and no refund.', ['BridgeRelay', 'BridgeProof']),
      properties: {
        ageSeconds: AGE, Bridge: ref('Bridge'), BridgeRequest: ref('BridgeRequest'),
        BridgeRelay: {
          anyOf: [ref('BridgeRelay'), { type: 'null' }],
          description: 'Null when the relay is not indexed (the destination chain not watched, or behind): the active proof says it happened.',
        },
        BridgeProof: ref('BridgeProof'),
      },
    },
    RefundedAndRelayedTransaction: listItem('A bridge both relayed and refunded.', ['BridgeRelay', 'BridgeRefund']),
    ConflictingProof: listItem('A bridge whose active proof comes from another relayer than the relay.', ['BridgeRelay', 'BridgeProof']),
    ActiveDispute: object({ ageSeconds: AGE, Bridge: ref('TransactionRef'), BridgeDispute: ref('BridgeDispute') }, 'A dispute with no later proof.'),
    InvalidRelay: object({ ageSeconds: AGE, ...openApiPropertiesOf(INVALID_RELAY_FIELDS) },
      'A relay with no matching request (flat object, as in the reference API).'),
    CompleteTransaction: object({
      Bridge: ref('Bridge'), BridgeRequest: ref('BridgeRequest'), BridgeRelay: ref('BridgeRelay'),
      BridgeProof: { ...ref('BridgeProof'), description: 'The latest proof, even if a later dispute voided it.' },
      BridgeClaim: ref('BridgeClaim'), BridgeRefund: ref('BridgeRefund'),
      BridgeDispute: { ...ref('BridgeDispute'), description: 'The latest dispute, present only if no proof came after it.' },
    }, 'Everything known about one bridge. Phases that did not happen are absent.',
    ['BridgeRelay', 'BridgeProof', 'BridgeClaim', 'BridgeRefund', 'BridgeDispute']),
    Problem: object({
      type: str('URI identifying the problem type.', { examples: ['urn:omnigate:problem:invalid-parameter'] }),
      title: str('Short summary of the problem type.'),
      status: int('HTTP status code.'),
      detail: str('Explanation of this occurrence.'),
      instance: str('Path of the request.'),
      code: str('Machine-readable code.', { enum: ['INVALID_PARAMETER', 'NOT_FOUND', 'METHOD_NOT_ALLOWED', 'DATABASE_UNAVAILABLE', 'SCHEMA_MISSING', 'INTERNAL'] }),
      parameter: str('For 400: the parameter at fault.'),
      invalidParams: {
        type: 'array',
        items: object({ name: str(), reason: str() }),
      },
      debug: { type: 'object', description: 'Only with NODE_ENV=development: error name, message, stack, cause.' },
    }, 'RFC 9457 problem details (Content-Type: application/problem+json).',
    ['instance', 'parameter', 'invalidParams', 'debug']),
  };
}

function parameters(limits: LimitSettings): Record<string, Schema> {
  const q = (name: string, description: string, schema: Schema) => ({ name, in: 'query', required: false, description, schema });
  return {
    limit: q('limit', `Page size, 1 to ${limits.maxLimit}; default ${limits.defaultLimit}.`,
      int(undefined, { minimum: 1, maximum: limits.maxLimit, default: limits.defaultLimit })),
    cursor: q('cursor', `Opaque cursor from the previous page's ${NEXT_CURSOR_HEADER} header (or its Link rel="next"); returns the rows after it.`,
      str(undefined, { pattern: '^[A-Za-z0-9_-]+$' })),
    originChainId: q('originChainId', 'Only bridges from this chain id.', int(undefined, { minimum: 1, maximum: MAX_INT4 })),
    destChainId: q('destChainId', 'Only bridges to this chain id.', int(undefined, { minimum: 1, maximum: MAX_INT4 })),
    since: q('since', 'Inclusive lower bound (unix seconds) on the timestamp the list is ordered by.', int(undefined, { minimum: 0, maximum: MAX_INT4 })),
    until: q('until', 'Exclusive upper bound (unix seconds) on the timestamp the list is ordered by; must be greater than since.',
      int(undefined, { minimum: 0, maximum: MAX_INT4 })),
  };
}

const problemResponse = (description: string, headers?: Record<string, unknown>) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/problem+json': { schema: ref('Problem') } },
});

function listOperation(route: (typeof LIST_ROUTES)[number], path: string) {
  const alias = path !== route.paths[0];
  return {
    get: {
      operationId: alias ? `${route.query}Alias` : route.query,
      tags: [alias ? 'Aliases' : 'Bridge transactions'],
      summary: alias ? `${route.summary} (alias)` : route.summary,
      description: `${alias ? `Same as GET ${route.paths[0]}. ` : ''}${route.description}\n\n`
        + `Ordered by ${route.sortedBy}, newest first, then transactionId descending. `
        + `The body is always a JSON array (\`[]\` when empty); when more rows exist the response carries `
        + `\`${NEXT_CURSOR_HEADER}\` and \`Link: <…&cursor=…>; rel="next"\`. GraphQL: \`${route.graphqlField}\`.`,
      parameters: ['limit', 'cursor', 'originChainId', 'destChainId', 'since', 'until'].map((p) => ({ $ref: `#/components/parameters/${p}` })),
      responses: {
        200: {
          description: 'One page of results.',
          headers: {
            [NEXT_CURSOR_HEADER]: { $ref: '#/components/headers/NextCursor' },
            Link: { $ref: '#/components/headers/Link' },
          },
          content: { 'application/json': { schema: { type: 'array', items: ref(route.itemType) } } },
        },
        400: { $ref: '#/components/responses/BadRequest' },
        405: { $ref: '#/components/responses/MethodNotAllowed' },
        500: { $ref: '#/components/responses/InternalError' },
        503: { $ref: '#/components/responses/ServiceUnavailable' },
      },
    },
  };
}

/** The OpenAPI document; `serverUrl` is where the host app mounted the handler ('/' at the root). */
export function buildOpenApi(options: { serverUrl?: string; limits?: LimitSettings } = {}): Record<string, unknown> {
  const limits = options.limits ?? { defaultLimit: DEFAULT_LIMIT, maxLimit: MAX_LIMIT };
  const paths: Record<string, unknown> = {};
  for (const route of LIST_ROUTES) for (const path of route.paths) paths[path] = listOperation(route, path);
  paths['/api/transaction-id/{transactionIdOrOriginTxHash}'] = {
    get: {
      operationId: 'transactionById',
      tags: ['Bridge transactions'],
      summary: 'One bridge transaction',
      description: 'Looks a bridge up by its transactionId or by the hash of the origin transaction that requested it '
        + '(case-insensitive hex). Phases that did not happen are absent. GraphQL: `transaction(id)`.',
      parameters: [{
        name: 'transactionIdOrOriginTxHash', in: 'path', required: true,
        description: 'transactionId or origin transaction hash: 0x and 64 hex digits.',
        schema: str('transactionId or origin transaction hash: 64 hex digits in any letter case, 0x optional.', { pattern: '^(0x|0X)?[0-9a-fA-F]{64}$' }),
      }],
      responses: {
        200: { description: 'The transaction.', content: { 'application/json': { schema: ref('CompleteTransaction') } } },
        400: { $ref: '#/components/responses/BadRequest' },
        404: { $ref: '#/components/responses/NotFound' },
        405: { $ref: '#/components/responses/MethodNotAllowed' },
        500: { $ref: '#/components/responses/InternalError' },
        503: { $ref: '#/components/responses/ServiceUnavailable' },
      },
    },
  };
  const opsOperation = (operationId: string, summary: string, description: string, schema: string) => ({
    get: {
      operationId, tags: ['Operations'], summary, description,
      responses: {
        200: { description: summary, content: { 'application/json': { schema: ref(schema) } } },
        400: { $ref: '#/components/responses/BadRequest' },
        405: { $ref: '#/components/responses/MethodNotAllowed' },
        500: { $ref: '#/components/responses/InternalError' },
        503: { $ref: '#/components/responses/ServiceUnavailable' },
      },
    },
  });
  paths['/api/stats'] = opsOperation('stats', 'Pending bridges per stage and chain pair',
    'Counts and the oldest age of the stages missingRelay, exceedDeadline, missingProof, missingClaim and disputed (the meanings of the '
      + 'lists of the same names), per origin → destination chain pair. Recomputed at most every few seconds (a snapshot shared by every '
      + 'client and by the Prometheus gauges); `generatedAt` says when. GraphQL: `stats`.', 'Stats');
  paths['/api/status'] = opsOperation('status', 'How far the index has come per chain',
    "The latest indexed block per chain, its time and age, and the finalized block where Ponder records it: from Ponder's "
      + '`_ponder_checkpoint` (0.11 and later; finalized from 0.13), `_ponder_status` (0.9–0.10) or `_ponder_meta` status row (0.4.42–0.8), '
      + 'else from the newest indexed event per chain (`source` says which); before 0.9 the finalized position is the app-wide '
      + 'checkpoint Ponder keeps (`_ponder_meta` app value, 0.4–0.5 `ponder.namespace_lock`). GraphQL: `status`.', 'IndexerStatus');
  const graphqlResponses = {
    200: {
      description: 'GraphQL result; a browser asking for text/html gets the GraphiQL page.',
      content: {
        'application/json': { schema: { type: 'object', properties: { data: { type: ['object', 'null'] }, errors: { type: 'array', items: { type: 'object' } } } } },
        'text/html': { schema: str('GraphiQL (self-contained, works offline).') },
      },
    },
    400: { description: 'Syntax or validation error, invalid argument, query too deep or too costly (GraphQL `errors`).', content: { 'application/json': { schema: { type: 'object' } } } },
    503: { description: 'Database unavailable (GraphQL `errors` with code DATABASE_UNAVAILABLE).', content: { 'application/json': { schema: { type: 'object' } } } },
  };
  paths['/graphql'] = {
    get: {
      operationId: 'graphqlGet', tags: ['GraphQL'], summary: 'GraphQL query (GET) or the GraphiQL page',
      description: 'With `query` (and optional `variables`, `operationName`) runs a query; from a browser without `query` serves GraphiQL. '
        + 'Queries are limited in depth and in cost (the sum of list limits).',
      parameters: [
        { name: 'query', in: 'query', required: false, schema: str() },
        { name: 'variables', in: 'query', required: false, description: 'JSON object.', schema: str() },
        { name: 'operationName', in: 'query', required: false, schema: str() },
      ],
      responses: graphqlResponses,
    },
    post: {
      operationId: 'graphqlPost', tags: ['GraphQL'], summary: 'GraphQL query (POST)',
      requestBody: {
        required: true,
        content: { 'application/json': { schema: object({ query: str(), variables: { type: ['object', 'null'] }, operationName: { type: ['string', 'null'] } }, undefined, ['variables', 'operationName']) } },
      },
      responses: {
        ...graphqlResponses,
        415: { description: 'A body in a charset other than UTF-8 (`Content-Type: application/json; charset=latin1`): GraphQL `errors`, code BAD_REQUEST.', content: { 'application/json': { schema: { type: 'object' } } } },
      },
    },
  };
  paths['/openapi.json'] = {
    get: {
      operationId: 'openapi', tags: ['Documentation'], summary: 'This OpenAPI document',
      responses: { 200: { description: 'OpenAPI 3.1 document.', content: { 'application/json': { schema: { type: 'object' } } } } },
    },
  };
  paths['/api-docs'] = {
    get: {
      operationId: 'apiDocs', tags: ['Documentation'], summary: 'This documentation (Redoc, served locally)',
      responses: { 200: { description: 'HTML page.', content: { 'text/html': { schema: str() } } } },
    },
  };

  return {
    openapi: '3.1.0',
    info: {
      title: 'omnigate indexer API',
      version: API_VERSION,
      summary: 'Bridge (FastBridge RFQ) events indexed by Ponder, served over REST and GraphQL.',
      description: 'Read access to the bridge events a Ponder indexer writes into PostgreSQL. Compatible with the RFQ indexer API '
        + '(same paths and nested JSON), with these differences: empty lists are `[]`, an unknown transaction is 404, '
        + '`sendChainGas` is a boolean, block numbers and raw amounts are exact decimal strings, every list is paged '
        + '(`limit`, `cursor`) and filterable (`originChainId`, `destChainId`, `since`, `until`), and errors are RFC 9457 problem details.\n\n'
        + '**Pagination.** Lists are ordered newest first by a timestamp (named on each route), ties broken by transactionId. '
        + `When more rows exist, the response has an \`${NEXT_CURSOR_HEADER}\` header and a \`Link\` header with rel="next"; `
        + 'repeat the request with `cursor` set to that value (keeping the other parameters) until the header is absent.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: options.serverUrl ?? '/' }],
    // A public read-only API: no authentication (stated explicitly, as OpenAPI recommends).
    security: [],
    tags: [
      { name: 'Bridge transactions', description: 'Lists and lookups over the indexed bridge events.' },
      { name: 'Aliases', description: 'Alternative paths for the same lists (both forms of the spec are served).' },
      { name: 'Operations', description: 'What operators watch: stages, ages and index progress.' },
      { name: 'GraphQL', description: 'The same queries over GraphQL.' },
      { name: 'Documentation', description: 'This document and its rendering.' },
    ],
    paths,
    components: {
      schemas: schemas(),
      parameters: parameters(limits),
      headers: {
        NextCursor: { description: 'Cursor of the next page; absent on the last page.', schema: str() },
        Link: { description: 'RFC 8288 link to the next page (rel="next"); absent on the last page.', schema: str() },
      },
      responses: {
        BadRequest: problemResponse('A parameter is invalid; `parameter` names it.'),
        NotFound: problemResponse('No such route, or no such transaction.'),
        MethodNotAllowed: problemResponse('Only GET and HEAD are supported.', { Allow: { schema: str() } }),
        InternalError: problemResponse('Unexpected error (details only with NODE_ENV=development).'),
        ServiceUnavailable: problemResponse('The database is unreachable or timed out; retry later.', { 'Retry-After': { schema: int() } }),
      },
    },
  };
}
