import path from 'node:path';
import test from 'ava';
import { readIndexerEnv } from '../../../../lib/indexer/env.js';

test('defaults: embedded database in .omnigate/pgdata', (t) => {
  t.deepEqual(readIndexerEnv({}), { dataDir: path.join('.omnigate', 'pgdata') });
  t.deepEqual(readIndexerEnv({ DATABASE_URL: '  ' }), { dataDir: path.join('.omnigate', 'pgdata') });
});

test('reads every key', (t) => {
  t.deepEqual(readIndexerEnv({
    DATABASE_URL: 'postgresql://u:p@db/index', OMNIGATE_PGDATA: '/var/lib/og', OMNIGATE_PG_PORT: '5499',
    OMNIGATE_DB_STATEMENT_TIMEOUT_MS: '8000', OMNIGATE_DB_CONNECT_TIMEOUT_MS: '1500', OMNIGATE_LOOKBACK_FLOOR: '1722729600',
    NODE_ENV: 'development',
  }), {
    databaseUrl: 'postgresql://u:p@db/index', dataDir: '/var/lib/og', port: 5499, statementTimeoutMs: 8000, connectTimeoutMs: 1500,
    lookbackFloor: 1722729600, nodeEnv: 'development',
  });
});

for (const [key, value] of [
  ['DATABASE_URL', 'mysql://x'], ['OMNIGATE_PG_PORT', '70000'], ['OMNIGATE_PG_PORT', 'x'],
  ['OMNIGATE_DB_STATEMENT_TIMEOUT_MS', '0'], ['OMNIGATE_DB_CONNECT_TIMEOUT_MS', '1.5'], ['OMNIGATE_LOOKBACK_FLOOR', '-1'],
  ['OMNIGATE_LOOKBACK_FLOOR', '1722729600000'],
] as const) {
  test(`rejects ${key}=${value} naming the variable`, (t) => {
    t.throws(() => readIndexerEnv({ [key]: value }), { message: new RegExp(key) });
  });
}
