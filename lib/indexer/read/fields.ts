/**
 * The one field table of everything the API serves about a bridge: the `Bridge` object, each event
 * (`BridgeRequest`, `BridgeRelay`, `BridgeProof`, `BridgeClaim`, `BridgeRefund`, `BridgeDispute`),
 * the `Bridge` of a dispute item (`TransactionRef`), the flat invalid-relay item and the bridge's
 * `decodedRequest`. From each table come the TypeScript type (`RowOf`, types.ts), the row mapper
 * (`mapperOf`, `phaseMapperOf`: shape.ts), the columns the SQL selects (`selectOf`, `phaseSelectOf`:
 * queries.ts), the GraphQL fields (`sdlOf`, graphql/schema.ts) and the OpenAPI properties
 * (`openApiPropertiesOf`, http/openapi.ts). Serving one more column is one line here (the Ponder
 * tables' own columns, which the migrations, the layout check and the demo seeder know, are
 * db/layout.ts's; a `decodedRequest` field is also read at its offset in request-decode.ts).
 *
 * A field's kind fixes its JSON type and spelling whatever the layout stored: block numbers and raw
 * amounts (`uint`) are exact decimal strings, chain ids (`int`) and timestamps numbers, `sendChainGas`
 * (Ponder 0.4 stores integer 0/1) a boolean, addresses EIP-55 checksummed, hashes, ids and bytes lower
 * case (hex.ts).
 */
import { decodeRequest } from './request-decode.js';
import { eip55, lowerHex } from './hex.js';

export type Row = Record<string, unknown>;

export type FieldKind =
  | 'hex' // a bytes32 id or hash: lower case
  | 'bytes' // other hex bytes: lower case
  | 'data' // hex bytes of any length, lower case, with a pattern saying so (zapData)
  | 'address' // EIP-55 checksummed
  | 'text' // as stored
  | 'uint' // an exact decimal string (numeric(78,0) columns)
  | 'int' // a number (chain ids)
  | 'timestamp' // a number, unix seconds
  | 'bool' // Ponder 0.4's integer 0/1 or a boolean
  | 'decodedRequest'; // what the `request` bytes encode (computed, see `from`)

export interface FieldSpec {
  /** The JSON key, and (Ponder 0.4 spelling) the column it is read from. */
  readonly name: string;
  readonly kind: FieldKind;
  /** May be null in the JSON (absent or SQL NULL in the row). */
  readonly nullable?: boolean;
  /** OpenAPI description; the kind adds its note (`EIP-55 checksummed.`, `Lower-case hex.`). */
  readonly doc?: string;
  /** GraphQL description, where the SDL gives one. */
  readonly gqlDoc?: string;
  /** OpenAPI `examples`. */
  readonly examples?: readonly unknown[];
  /** The only values (OpenAPI `enum`; the TypeScript type is their union). */
  readonly enum?: readonly (string | number)[];
  /**
   * A nullable field documented as `anyOf: [the kind's schema, null]` with this description (the
   * kind's schema keeps `doc`); without it, a nullable field is `type: [the kind's type, 'null']`.
   */
  readonly nullDoc?: string;
  /** A computed field: the column it is computed from (not selected itself). */
  readonly from?: string;
}

/** The TypeScript type of each kind's value. */
export interface KindTypes {
  hex: string; bytes: string; data: string; address: string; text: string; uint: string;
  int: number; timestamp: number; bool: boolean; decodedRequest: DecodedRequest;
}

type KindValueOf<F extends FieldSpec> = F extends { readonly enum: readonly (infer E)[] } ? E : KindTypes[F['kind']];
type ValueOf<F extends FieldSpec> = F extends { readonly nullable: true } ? KindValueOf<F> | null : KindValueOf<F>;
/** The JSON object a table describes: `type Bridge = RowOf<typeof BRIDGE_FIELDS>`. */
export type RowOf<T extends readonly FieldSpec[]> = { [F in T[number] as F['name']]: ValueOf<F> };

// ---- the tables ----

const EVENT_FIELDS = [
  {
    name: 'blockNumber', kind: 'uint', doc: 'Block number, exact decimal string (numeric(78,0) in the database).',
    gqlDoc: 'Exact decimal string (the column is numeric(78,0)).',
  },
  { name: 'blockTimestamp', kind: 'timestamp', doc: 'Block time, unix seconds.', gqlDoc: 'Unix seconds.' },
  { name: 'transactionHash', kind: 'hex', doc: 'Hash of the transaction that emitted the event.' },
] as const satisfies readonly FieldSpec[];

/** `Bridge` (GraphQL `Transaction`): the bridge as requested on the origin chain. */
export const BRIDGE_FIELDS = [
  { name: 'transactionId', kind: 'hex', doc: 'The bridge transaction id (bytes32).' },
  { name: 'originChain', kind: 'text', doc: 'Origin chain name.', examples: ['arbitrum'] },
  { name: 'destChain', kind: 'text', doc: 'Destination chain name.', examples: ['base'] },
  { name: 'originChainId', kind: 'int', doc: 'Origin chain id.', examples: [42161] },
  { name: 'destChainId', kind: 'int', doc: 'Destination chain id.', examples: [8453] },
  { name: 'originToken', kind: 'address', doc: 'Token sent on the origin chain.' },
  { name: 'destToken', kind: 'address', doc: 'Token received on the destination chain.' },
  { name: 'originAmountFormatted', kind: 'text', doc: 'Origin amount in token units as formatted by the indexer.', examples: ['100.5'] },
  { name: 'destAmountFormatted', kind: 'text', doc: 'Destination amount as formatted by the indexer.', examples: ['100.4'] },
  { name: 'sender', kind: 'address', doc: 'Sender on the origin chain.' },
  { name: 'request', kind: 'bytes', doc: 'ABI-encoded bridge request (hex), as emitted.' },
  { name: 'sendChainGas', kind: 'bool', doc: 'Whether the relayer also delivers gas on the destination chain.' },
  {
    name: 'originAmount', kind: 'uint', nullable: true,
    doc: 'Raw origin amount (smallest unit), exact decimal string; null if not indexed.',
    gqlDoc: 'Raw amount in token units, exact decimal string; null when the indexer did not store it.',
  },
  {
    name: 'destAmount', kind: 'uint', doc: 'Raw destination amount (smallest unit), exact decimal string.',
    gqlDoc: 'Raw amount in token units, exact decimal string.',
  },
  {
    name: 'decodedRequest', kind: 'decodedRequest', nullable: true, from: 'request',
    doc: 'What `request` encodes (FastBridge v1 or v2 layout); null when it is neither.',
    gqlDoc: 'What request encodes (FastBridge v1 or v2 layout); null when it is neither.',
  },
] as const satisfies readonly FieldSpec[];

/** The `Bridge` of a dispute item (GraphQL `TransactionRef`): disputes are not joined to requests. */
export const TRANSACTION_REF_FIELDS = [
  { name: 'transactionId', kind: 'hex', doc: 'The bridge transaction id.' },
] as const satisfies readonly FieldSpec[];

/** `BridgeRequest` (GraphQL `Deposit`). */
export const REQUEST_FIELDS = EVENT_FIELDS;

/** `BridgeRelay` (GraphQL `Relay`). */
export const RELAY_FIELDS = [
  ...EVENT_FIELDS,
  { name: 'relayer', kind: 'address', doc: 'Relayer that relayed.' },
  { name: 'to', kind: 'address', doc: 'Recipient on the destination chain.' },
] as const satisfies readonly FieldSpec[];

/** `BridgeProof` (GraphQL `Proof`). */
export const PROOF_FIELDS = [
  ...EVENT_FIELDS,
  { name: 'relayer', kind: 'address', doc: 'Relayer that proved.' },
] as const satisfies readonly FieldSpec[];

/** `BridgeClaim` (GraphQL `Claim`). */
export const CLAIM_FIELDS = [
  ...EVENT_FIELDS,
  { name: 'to', kind: 'address', doc: 'Recipient of the claimed funds.' },
  { name: 'relayer', kind: 'address', doc: 'Relayer that claimed.' },
  { name: 'amountFormatted', kind: 'text', doc: 'Claimed amount as formatted by the indexer.' },
  { name: 'token', kind: 'address', doc: 'Claimed token.' },
  { name: 'amount', kind: 'uint', doc: 'Claimed amount, smallest unit.' },
] as const satisfies readonly FieldSpec[];

/** `BridgeRefund` (GraphQL `Refund`). */
export const REFUND_FIELDS = [
  ...EVENT_FIELDS,
  { name: 'to', kind: 'address', doc: 'Recipient of the refund.' },
  { name: 'amountFormatted', kind: 'text', doc: 'Refunded amount as formatted by the indexer.' },
  { name: 'token', kind: 'address', doc: 'Refunded token.' },
  { name: 'amount', kind: 'uint', doc: 'Refunded amount, smallest unit.' },
] as const satisfies readonly FieldSpec[];

/** `BridgeDispute` (GraphQL `Dispute`). */
export const DISPUTE_FIELDS = [
  ...EVENT_FIELDS,
  { name: 'originChainId', kind: 'int', doc: 'Origin chain id.' },
  { name: 'originChain', kind: 'text', doc: 'Origin chain name.' },
  { name: 'relayer', kind: 'address', doc: 'Address recorded by the event.' },
] as const satisfies readonly FieldSpec[];

/** An invalid relay (a relay with no request): one flat object, as in the reference API. */
export const INVALID_RELAY_FIELDS = [
  { name: 'transactionId', kind: 'hex', doc: 'The relayed transaction id, unknown on the origin chain.' },
  ...EVENT_FIELDS,
  { name: 'originChain', kind: 'text' },
  { name: 'destChain', kind: 'text' },
  { name: 'originChainId', kind: 'int' },
  { name: 'destChainId', kind: 'int' },
  { name: 'originToken', kind: 'address' },
  { name: 'destToken', kind: 'address' },
  { name: 'originAmountFormatted', kind: 'text' },
  { name: 'destAmountFormatted', kind: 'text' },
  { name: 'to', kind: 'address' },
  { name: 'relayer', kind: 'address' },
] as const satisfies readonly FieldSpec[];

/**
 * `decodedRequest`: what the `request` bytes encode (FastBridge v1 or v2 layout). Not read from a
 * row: request-decode.ts computes it (its tests check it makes exactly these keys).
 */
export const DECODED_REQUEST_FIELDS = [
  {
    name: 'version', kind: 'int', enum: [1, 2],
    doc: '1: FastBridge `BridgeTransaction` (abi.encode); 2: FastBridgeV2 `BridgeTransactionV2` (packed).',
    gqlDoc: '1: FastBridge BridgeTransaction (abi.encode); 2: FastBridgeV2 BridgeTransactionV2 (packed).',
  },
  { name: 'originChainId', kind: 'int' },
  { name: 'destChainId', kind: 'int' },
  { name: 'originSender', kind: 'address' },
  { name: 'destRecipient', kind: 'address' },
  { name: 'originToken', kind: 'address' },
  { name: 'destToken', kind: 'address' },
  { name: 'originAmount', kind: 'uint', doc: 'Smallest unit.' },
  { name: 'destAmount', kind: 'uint', doc: 'Smallest unit.' },
  { name: 'originFeeAmount', kind: 'uint', doc: 'Smallest unit.' },
  {
    name: 'deadline', kind: 'uint', doc: 'Unix seconds after which a relay reverts and the request may be refunded (uint256); missing-relay holds the bridges not past it.',
    gqlDoc: 'Unix seconds after which a relay reverts and the request may be refunded; missing-relay holds the bridges not past it.',
  },
  { name: 'nonce', kind: 'uint', doc: 'Nonce of the request (uint256).' },
  { name: 'sendChainGas', kind: 'bool', nullable: true, nullDoc: 'v1 only; null in v2.', gqlDoc: 'v1 only (null in v2).' },
  {
    name: 'exclusivityRelayer', kind: 'address', nullable: true,
    nullDoc: 'v2 only: the relayer with the exclusive right to relay until exclusivityEndTime (zero address: none).',
    gqlDoc: 'v2 only: the relayer with the exclusive right to relay until exclusivityEndTime (zero address: none).',
  },
  { name: 'exclusivityEndTime', kind: 'uint', nullable: true, doc: 'Unix seconds.', nullDoc: 'v2 only.', gqlDoc: 'v2 only.' },
  {
    name: 'zapNative', kind: 'uint', nullable: true, doc: 'Smallest unit.',
    nullDoc: 'v2 only: native value forwarded to the recipient.', gqlDoc: 'v2 only: native value forwarded to the recipient.',
  },
  {
    name: 'zapData', kind: 'data', nullable: true,
    nullDoc: 'v2 only: call data forwarded to the recipient.', gqlDoc: 'v2 only: call data forwarded to the recipient (hex).',
  },
] as const satisfies readonly FieldSpec[];

/** A decoded request (`decodedRequest` of a bridge): its fields are DECODED_REQUEST_FIELDS. */
export type DecodedRequest = RowOf<typeof DECODED_REQUEST_FIELDS>;

/** The events joined to a request, each read from columns prefixed with its phase (`relay_to`). */
export const PHASE_FIELDS = {
  request: REQUEST_FIELDS, relay: RELAY_FIELDS, proof: PROOF_FIELDS, claim: CLAIM_FIELDS, refund: REFUND_FIELDS, dispute: DISPUTE_FIELDS,
} as const;
export type Phase = keyof typeof PHASE_FIELDS;
/** The prefix of a phase's column aliases in the SQL (queries.ts) and the rows (shape.ts). */
export const phasePrefix = (phase: Phase): string => `${phase}_`;

// ---- the row mapper ----

function text(v: unknown): string {
  return typeof v === 'string' ? v : v === null || v === undefined ? '' : String(v);
}
function int(v: unknown): number {
  return typeof v === 'number' ? v : Number(v);
}
/** Ponder stores booleans as integer 0/1; a database with a real boolean column also works. */
export function toBoolean(v: unknown): boolean {
  return v === true || v === 1 || v === '1' || v === 't' || v === 'true';
}
/** A hash, id or bytes column: lower case on every layout. */
export const hexOf = (v: unknown): string => lowerHex(text(v));

/** How each kind is read from its column. */
const READ: { readonly [K in FieldKind]: (v: unknown) => KindTypes[K] | null } = {
  hex: hexOf,
  bytes: hexOf,
  data: hexOf,
  // Ponder 0.4 stores addresses checksummed, 0.12+ in lower case.
  address: (v) => eip55(text(v)),
  text,
  uint: text,
  int,
  timestamp: int,
  bool: toBoolean,
  decodedRequest: (v) => decodeRequest(hexOf(v)) as DecodedRequest | null,
};

type Mapper = (row: Row, leadValue?: unknown) => unknown;

/**
 * Compiles a table's mapper: one object literal with the keys in table order and the columns read
 * by static names, as a hand-written mapper would be. (A generic loop of keyed stores, or a spread,
 * shaped a 100-row page 1.7 to 20 times slower.) The generated text holds only the table's names
 * (JSON-quoted) and indexes into `reads`, never a value from a request or a row.
 */
function compile(table: readonly FieldSpec[], prefix: string, lead?: string): Mapper {
  const reads = table.map((f): ((v: unknown) => unknown) => {
    const read = READ[f.kind];
    return f.nullable ? (v) => (v === null || v === undefined ? null : read(v)) : read;
  });
  const entries = table.map((f, i) => `${JSON.stringify(f.name)}: reads[${i}](row[${JSON.stringify(prefix + (f.from ?? f.name))}])`);
  if (lead !== undefined) entries.unshift(`${JSON.stringify(lead)}: leadValue`);
  const make = new Function('reads', `return (row, leadValue) => ({ ${entries.join(', ')} });`) as (r: typeof reads) => Mapper;
  return make(reads);
}

/**
 * The function that makes a table's JSON object of a row, keys in table order. Columns are read
 * as `prefix + name` (`relay_blockNumber`: queries.ts aliases joined events with a phase prefix).
 */
export function mapperOf<const T extends readonly FieldSpec[]>(table: T, prefix = ''): (row: Row) => RowOf<T> {
  return compile(table, prefix) as (row: Row) => RowOf<T>;
}

/** The mapper of a joined event, reading its phase's aliased columns. */
export function phaseMapperOf<P extends Phase>(phase: P): (row: Row) => RowOf<(typeof PHASE_FIELDS)[P]> {
  return mapperOf(PHASE_FIELDS[phase] as (typeof PHASE_FIELDS)[P], phasePrefix(phase));
}

type Aged<T extends readonly FieldSpec[]> = { ageSeconds: number } & RowOf<T>;

/** The same with a first key `ageSeconds` (the flat invalid-relay item). */
export function agedMapperOf<const T extends readonly FieldSpec[]>(table: T): (row: Row, ageSeconds: number) => Aged<T> {
  return compile(table, '', 'ageSeconds') as (row: Row, ageSeconds: number) => Aged<T>;
}

// ---- SQL ----

/**
 * The select list of a table's columns on table alias `alias` (Ponder 0.4 spelling; layout.ts
 * rewrites it for the others), aliased `prefix + name` when a prefix is given. Computed fields
 * are not selected (their source column is).
 */
export function selectOf(table: readonly FieldSpec[], alias: string, prefix = ''): string {
  return table.filter((f) => f.from === undefined)
    .map((f) => `${alias}."${f.name}"${prefix ? ` AS "${prefix}${f.name}"` : ''}`)
    .join(', ');
}

/** The select list of a joined event on table alias `alias`: `l."to" AS "relay_to"`, … */
export const phaseSelectOf = (phase: Phase, alias: string): string => selectOf(PHASE_FIELDS[phase], alias, phasePrefix(phase));

// ---- GraphQL ----

const GRAPHQL_TYPE: { readonly [K in FieldKind]: string } = {
  hex: 'String', bytes: 'String', data: 'String', address: 'String', text: 'String', uint: 'String',
  int: 'Int', timestamp: 'Int', bool: 'Boolean', decodedRequest: 'DecodedRequest',
};

/** The SDL field definitions of a table (one per line, each after its description if it has one). */
export function sdlOf(table: readonly FieldSpec[]): string {
  return table.map((f) => `${f.gqlDoc ? `\n  ${JSON.stringify(f.gqlDoc)}` : ''}
  ${f.name}: ${GRAPHQL_TYPE[f.kind]}${f.nullable ? '' : '!'}`).join('');
}

// ---- OpenAPI ----

type Schema = Record<string, unknown>;

const OPENAPI_TYPE: { readonly [K in FieldKind]: { type: string; pattern?: string; note?: string } } = {
  hex: { type: 'string', pattern: '^0x[0-9a-f]{64}$', note: 'Lower-case hex.' },
  bytes: { type: 'string' },
  data: { type: 'string', pattern: '^0x([0-9a-f]{2})*$' },
  address: { type: 'string', pattern: '^0x[0-9a-fA-F]{40}$', note: 'EIP-55 checksummed.' },
  text: { type: 'string' },
  uint: { type: 'string', pattern: '^[0-9]+$' },
  int: { type: 'integer' },
  timestamp: { type: 'integer' },
  bool: { type: 'boolean' },
  decodedRequest: { type: 'object' },
};

function openApiOf(f: FieldSpec): Schema {
  const { type, pattern, note } = OPENAPI_TYPE[f.kind];
  const description = [f.doc, note].filter(Boolean).join(' ');
  const desc = description ? { description } : {};
  if (f.kind === 'decodedRequest') {
    const schema = { $ref: '#/components/schemas/DecodedRequest' };
    return f.nullable ? { anyOf: [schema, { type: 'null' }], ...desc } : { ...schema, ...desc };
  }
  const schema = {
    type, ...desc, ...(pattern ? { pattern } : {}), ...(f.examples ? { examples: f.examples } : {}), ...(f.enum ? { enum: f.enum } : {}),
  };
  if (!f.nullable) return schema;
  if (f.nullDoc !== undefined) return { anyOf: [schema, { type: 'null' }], description: f.nullDoc };
  return { type: [type, 'null'], ...(pattern ? { pattern } : {}), ...desc };
}

/** The OpenAPI `properties` of a table, in table order. */
export function openApiPropertiesOf(table: readonly FieldSpec[]): Record<string, Schema> {
  return Object.fromEntries(table.map((f) => [f.name, openApiOf(f)]));
}
