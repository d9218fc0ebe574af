import test from 'ava';
import { defaultMigrationsDir, loadMigrations } from '../../../../../lib/indexer/db/migrate.js';

test('migrations are found next to the package and loaded in order with checksums', async (t) => {
  t.regex(defaultMigrationsDir(), /config[/\\]migrations$/);
  const migrations = await loadMigrations();
  t.deepEqual(migrations.map((m) => m.name), ['0001_ponder_tables', '0002_query_indexes', '0003_transaction_id_hash_indexes', '0004_stats_indexes', '0005_status_indexes']);
  for (const m of migrations) t.regex(m.checksum, /^[0-9a-f]{64}$/);
});

test('the table migration declares the six Ponder tables with their physical types', async (t) => {
  const [tables] = await loadMigrations();
  for (const name of ['BridgeRequestEvents', 'BridgeRelayedEvents', 'BridgeProofProvidedEvents', 'BridgeProofDisputedEvents',
    'BridgeDepositClaimedEvents', 'BridgeDepositRefundedEvents']) {
    t.true(tables!.sql.includes(`CREATE TABLE IF NOT EXISTS "${name}" (`), name);
  }
  t.regex(tables!.sql, /"sendChainGas" integer NOT NULL/);
  t.regex(tables!.sql, /"originAmount" numeric\(78, 0\),\n/, 'optional originAmount is nullable');
  t.notRegex(tables!.sql.replace(/--.*$/gm, ''), /\bboolean\b|\bbigint\b/, 'Ponder 0.4 maps booleans to integer and bigints to numeric(78,0)');
});
