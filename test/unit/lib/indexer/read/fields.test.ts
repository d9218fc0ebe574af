import test from 'ava';
import type { GraphQLObjectType } from 'graphql';
import {
  BRIDGE_FIELDS, CLAIM_FIELDS, DECODED_REQUEST_FIELDS, DISPUTE_FIELDS, INVALID_RELAY_FIELDS, mapperOf, openApiPropertiesOf,
  phaseSelectOf, PROOF_FIELDS, REFUND_FIELDS, RELAY_FIELDS, REQUEST_FIELDS, sdlOf, selectOf, TRANSACTION_REF_FIELDS, type FieldSpec,
} from '../../../../../lib/indexer/read/fields.js';
import {
  bridgeOf, claimOf, disputeItem, disputeOf, invalidRelayItem, proofOf, refundOf, relayOf, requestOf, type Row,
} from '../../../../../lib/indexer/read/shape.js';
import { decodeRequest } from '../../../../../lib/indexer/read/request-decode.js';
import { buildIndexerSchema } from '../../../../../lib/indexer/graphql/schema.js';
import { buildOpenApi } from '../../../../../lib/indexer/http/openapi.js';
import type { Bridge, BridgeClaim, BridgeRelay, DecodedRequest, InvalidRelayItem } from '../../../../../lib/indexer/types.js';

/** Each table with its GraphQL type, its OpenAPI schema and the phase prefix its columns are read with. */
const TABLES: { table: readonly FieldSpec[]; graphql: string; openapi: string; prefix: string }[] = [
  { table: BRIDGE_FIELDS, graphql: 'Transaction', openapi: 'Bridge', prefix: '' },
  { table: TRANSACTION_REF_FIELDS, graphql: 'TransactionRef', openapi: 'TransactionRef', prefix: '' },
  { table: REQUEST_FIELDS, graphql: 'Deposit', openapi: 'BridgeRequest', prefix: 'request_' },
  { table: RELAY_FIELDS, graphql: 'Relay', openapi: 'BridgeRelay', prefix: 'relay_' },
  { table: PROOF_FIELDS, graphql: 'Proof', openapi: 'BridgeProof', prefix: 'proof_' },
  { table: CLAIM_FIELDS, graphql: 'Claim', openapi: 'BridgeClaim', prefix: 'claim_' },
  { table: REFUND_FIELDS, graphql: 'Refund', openapi: 'BridgeRefund', prefix: 'refund_' },
  { table: DISPUTE_FIELDS, graphql: 'Dispute', openapi: 'BridgeDispute', prefix: 'dispute_' },
  { table: INVALID_RELAY_FIELDS, graphql: 'InvalidRelay', openapi: 'InvalidRelay', prefix: '' },
];
/** Tables whose objects are not read from a row (request-decode.ts computes them). */
const COMPUTED: typeof TABLES = [{ table: DECODED_REQUEST_FIELDS, graphql: 'DecodedRequest', openapi: 'DecodedRequest', prefix: '' }];
const names = (table: readonly FieldSpec[]) => table.map((f) => f.name);

/** A row holding every column of every table (prefixed and not), with values of the right sort. */
const ADDRESS = '0xaf88d065e77c8cc2239327c5edb3a432268e5831';
function fullRow(): Row {
  const row: Row = { _sortTs: 1700000000 };
  for (const { table, prefix } of TABLES) {
    for (const f of table) {
      const value = f.kind === 'address' ? ADDRESS : f.kind === 'int' || f.kind === 'timestamp' ? '7' : f.kind === 'bool' ? 1 : '0xAB';
      row[prefix + (f.from ?? f.name)] ??= value;
    }
  }
  return row;
}

test('every table field is a GraphQL field of its type, in order, with the nullability of the table', (t) => {
  const schema = buildIndexerSchema();
  for (const { table, graphql } of [...TABLES, ...COMPUTED]) {
    const fields = (schema.getType(graphql) as GraphQLObjectType).getFields();
    const served = Object.keys(fields).filter((k) => k !== 'cursor' && k !== 'ageSeconds');
    t.deepEqual(served, names(table), graphql);
    for (const f of table) t.is(String(fields[f.name]!.type).endsWith('!'), !f.nullable, `${graphql}.${f.name}`);
  }
});

test('every table field is an OpenAPI property of its schema, in order, all required', (t) => {
  const schemas = (buildOpenApi().components as { schemas: Record<string, { properties: object; required: string[] }> }).schemas;
  for (const { table, openapi } of [...TABLES, ...COMPUTED]) {
    const schema = schemas[openapi]!;
    const served = Object.keys(schema.properties).filter((k) => k !== 'ageSeconds');
    t.deepEqual(served, names(table), openapi);
    t.deepEqual(schema.required.filter((k) => k !== 'ageSeconds'), names(table), openapi);
  }
});

test('the generators: SDL lines, OpenAPI properties by kind, select lists', (t) => {
  t.is(sdlOf(PROOF_FIELDS), '\n  "Exact decimal string (the column is numeric(78,0))."\n  blockNumber: String!'
    + '\n  "Unix seconds."\n  blockTimestamp: Int!\n  transactionHash: String!\n  relayer: String!');
  const bridge = openApiPropertiesOf(BRIDGE_FIELDS);
  t.deepEqual(bridge.transactionId, {
    type: 'string', description: 'The bridge transaction id (bytes32). Lower-case hex.', pattern: '^0x[0-9a-f]{64}$',
  });
  t.deepEqual(bridge.originChainId, { type: 'integer', description: 'Origin chain id.', examples: [42161] });
  t.deepEqual(bridge.originAmount, {
    type: ['string', 'null'], pattern: '^[0-9]+$', description: 'Raw origin amount (smallest unit), exact decimal string; null if not indexed.',
  });
  t.deepEqual(openApiPropertiesOf(INVALID_RELAY_FIELDS).to, { type: 'string', description: 'EIP-55 checksummed.', pattern: '^0x[0-9a-fA-F]{40}$' });
  t.is(phaseSelectOf('proof', 'p'), 'p."blockNumber" AS "proof_blockNumber", p."blockTimestamp" AS "proof_blockTimestamp", '
    + 'p."transactionHash" AS "proof_transactionHash", p."relayer" AS "proof_relayer"');
  t.false(selectOf(BRIDGE_FIELDS, 'r').includes('decodedRequest'), 'a computed field is not selected');
  t.true(selectOf(BRIDGE_FIELDS, 'r').startsWith('r."transactionId", r."originChain"'));
});

test('the row mappers output exactly the table names, in order, with the kinds applied', (t) => {
  const row = fullRow();
  const mappers: [readonly FieldSpec[], (r: Row) => object][] = [
    [BRIDGE_FIELDS, bridgeOf], [REQUEST_FIELDS, requestOf], [RELAY_FIELDS, relayOf], [PROOF_FIELDS, proofOf],
    [CLAIM_FIELDS, claimOf], [REFUND_FIELDS, refundOf], [DISPUTE_FIELDS, disputeOf],
  ];
  for (const [table, map] of mappers) t.deepEqual(Object.keys(map(row)), names(table));
  t.deepEqual(Object.keys(disputeItem(row, 0).Bridge), names(TRANSACTION_REF_FIELDS));
  t.deepEqual(Object.keys(invalidRelayItem(row, 1700000100)), ['ageSeconds', ...names(INVALID_RELAY_FIELDS)]);
  const bridge = bridgeOf(row);
  t.is(bridge.transactionId, '0xab', 'hex: lower case');
  t.is(bridge.sender, '0xaf88d065e77c8cC2239327C5EDb3A432268e5831', 'address: EIP-55');
  t.is(bridge.originChainId, 7, 'int: a number');
  t.is(bridge.sendChainGas, true, 'bool');
  t.is(bridge.decodedRequest, null, 'computed from request: bytes of neither layout');
  t.is(bridgeOf({ ...row, originAmount: null }).originAmount, null, 'nullable');
  t.is(bridgeOf({ ...row, originAmount: undefined }).originAmount, null, 'nullable, column absent');
  t.is(mapperOf(RELAY_FIELDS, 'x_')({ x_blockNumber: 12n }).blockNumber, '12', 'uint: an exact string');
});

test('the request decoder makes exactly the keys of its table, in order, in both layouts', (t) => {
  const v1 = decodeRequest(`0x${'0'.repeat(12 * 64)}`);
  const v2 = decodeRequest(`0x0002${'00'.repeat(332)}`);
  t.is(v1?.version, 1);
  t.is(v2?.version, 2);
  t.deepEqual(Object.keys(v1!), names(DECODED_REQUEST_FIELDS));
  t.deepEqual(Object.keys(v2!), names(DECODED_REQUEST_FIELDS));
  const props = openApiPropertiesOf(DECODED_REQUEST_FIELDS);
  t.deepEqual(props.version, {
    type: 'integer', description: '1: FastBridge `BridgeTransaction` (abi.encode); 2: FastBridgeV2 `BridgeTransactionV2` (packed).', enum: [1, 2],
  });
  t.deepEqual(props.exclusivityEndTime, {
    anyOf: [{ type: 'string', description: 'Unix seconds.', pattern: '^[0-9]+$' }, { type: 'null' }], description: 'v2 only.',
  });
});

test('the TypeScript types come from the tables', (t) => {
  // Compile-time checks: these assignments fail `npm run typecheck` if a derived type drifts.
  const nullableAmount: Bridge['originAmount'] = null;
  const decoded: Bridge['decodedRequest'] = null as DecodedRequest | null;
  const timestamp: BridgeRelay['blockTimestamp'] = 1;
  const amount: BridgeClaim['amount'] = '1';
  const flat: keyof InvalidRelayItem = 'ageSeconds';
  const version: DecodedRequest['version'] = 2;
  // @ts-expect-error the version is 1 or 2 (its enum)
  const badVersion: DecodedRequest['version'] = 3;
  // @ts-expect-error a non-nullable field does not take null
  const notNull: Bridge['destAmount'] = null;
  t.deepEqual([nullableAmount, decoded, timestamp, amount, flat, version, badVersion, notNull], [null, null, 1, '1', 'ageSeconds', 2, 3, null]);
});
