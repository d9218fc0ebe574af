import test from 'ava';
import { GraphQLList, GraphQLNonNull, getNamedType, type GraphQLObjectType } from 'graphql';
import { LIST_ROUTES } from '../../../../../lib/indexer/catalog.js';
import { buildIndexerSchema } from '../../../../../lib/indexer/graphql/schema.js';

const schema = buildIndexerSchema();
const query = schema.getQueryType()!;

test('every catalogue list is a Query field with the REST arguments, returning [Item!]!', (t) => {
  for (const route of LIST_ROUTES) {
    const field = query.getFields()[route.graphqlField];
    t.truthy(field, route.graphqlField);
    t.deepEqual(field!.args.map((a) => `${a.name}: ${a.type}`), [
      'limit: Int', 'cursor: String', 'originChainId: Int', 'destChainId: Int', 'since: Int', 'until: Int',
    ]);
    t.true(field!.type instanceof GraphQLNonNull && (field!.type as GraphQLNonNull<GraphQLList<never>>).ofType instanceof GraphQLList);
    const item = getNamedType(field!.type) as GraphQLObjectType;
    t.is(item.name, route.itemType);
    t.is(String(item.getFields().cursor?.type), 'String!');
  }
});

test('exact types: block numbers are String!, sendChainGas is Boolean!', (t) => {
  const tx = schema.getType('Transaction') as GraphQLObjectType;
  t.is(String(tx.getFields().sendChainGas?.type), 'Boolean!');
  t.is(String(tx.getFields().originAmount?.type), 'String');
  for (const name of ['Deposit', 'Relay', 'Proof', 'Claim', 'Refund', 'Dispute', 'InvalidRelay']) {
    t.is(String((schema.getType(name) as GraphQLObjectType).getFields().blockNumber?.type), 'String!', name);
  }
  t.is(String(query.getFields().transaction?.type), 'CompleteTransaction');
  t.truthy(query.getFields().transactionById?.deprecationReason);
});
