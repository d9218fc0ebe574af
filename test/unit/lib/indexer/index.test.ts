/** The indexer's entry: the names it documents are exported, the package entry re-exports the same values, and its 405 keeps the indexer's name. */
import test from 'ava';
import * as errors from '../../../../lib/errors.js';
import * as indexer from '../../../../lib/indexer/index.js';
import * as omnigate from '../../../../lib/index.js';

test('should export the API, the database helpers, the queries and the gauges', (t) => {
  for (const name of ['indexerApi', 'indexerNotFound', 'openIndexerDb', 'watchDatabase', 'createIndexerDb', 'closeIndexerDb', 'migrate', 'loadMigrations', 'seedDemo', 'generateDemo',
    'registerDbCommands', 'readIndexerEnv', 'withIndexerConfig', 'startEmbeddedPostgres', 'buildOpenApi', 'decodeRequest', 'runStats', 'runStatus', 'indexerGauges',
    'buildIndexerSchema', 'missingRelay', 'exceedDeadline', 'missingProof', 'missingClaim', 'refundedAndRelayed', 'conflictingProofs', 'activeDisputes', 'invalidRelays', 'findTransaction'] as const) {
    t.is(typeof indexer[name], 'function', name);
  }
  t.true(indexer.MAX_LIMIT >= indexer.DEFAULT_LIMIT);
});

test('the package entry should re-export the same values', (t) => {
  for (const name of ['indexerApi', 'indexerNotFound', 'openIndexerDb', 'watchDatabase', 'migrate', 'seedDemo', 'buildOpenApi', 'indexerGauges', 'DEFAULT_STATS_INTERVAL_SECONDS'] as const) {
    t.is(omnigate[name], indexer[name], name);
  }
});

test('its MethodNotAllowedError should be the indexer\'s 405, not the balancer\'s', (t) => {
  t.is(indexer.MethodNotAllowedError, errors.IndexerMethodNotAllowedError);
  t.not(indexer.MethodNotAllowedError as unknown, omnigate.MethodNotAllowedError as unknown);
  t.is(new indexer.MethodNotAllowedError('PUT', 'GET').status, 405);
});
