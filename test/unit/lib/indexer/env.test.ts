import path from 'node:path';
import test from 'ava';
import { readIndexerEnv, withIndexerConfig } from '../../../../lib/indexer/env.js';

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

for (const url of ['postgres://admin:hunter2-secret@db:99999/index', 'postgres://admin:hunter2-secret@[::1/index', 'postgresql://admin:hunter2-secret@db:port/index']) {
  test(`rejects DATABASE_URL=${url.replace('hunter2-secret', '***')} naming the variable and the fix, never the password`, (t) => {
    const err = t.throws(() => readIndexerEnv({ DATABASE_URL: url }));
    t.regex(err!.message, /^DATABASE_URL is not a URL node-postgres can read \(its value is not shown: it holds the password\): write postgres:\/\/USER:PASSWORD@HOST:PORT\/DATABASE/);
    t.false(err!.message.includes('hunter2'));
  });
}

test('accepts what node-postgres reads: a socket in ?host= with an empty host, a space in the password', (t) => {
  for (const url of ['postgres://admin:hunter2-secret@/index?host=/var/run/postgresql', 'postgres://admin:hunter 2@db/index', 'postgres://admin:p%40ss@db:5432/index']) {
    t.is(readIndexerEnv({ DATABASE_URL: url }).databaseUrl, url);
  }
});

test('withIndexerConfig: the config\'s indexer: section fills what the environment leaves unset; a set variable wins', (t) => {
  const env = readIndexerEnv({ OMNIGATE_DB_STATEMENT_TIMEOUT_MS: '7000', OMNIGATE_INDEXER_SCHEMA: 'fromenv' });
  const merged = withIndexerConfig(env, { schema: 'rfq', statementTimeoutMs: 9000, connectTimeoutMs: 1500, lookbackFloor: 1_700_000_000, statsIntervalSeconds: 10 });
  t.is(merged.schema, 'fromenv');
  t.is(merged.statementTimeoutMs, 7000);
  t.is(merged.connectTimeoutMs, 1500);
  t.is(merged.lookbackFloor, 1_700_000_000);
  t.is(merged.statsIntervalSeconds, 10);
  t.is(merged.dataDir, env.dataDir, 'the embedded database\'s settings come from the environment only');
  t.deepEqual(withIndexerConfig(env, {}), env);
});
