/**
 * `omnigate db migrate` and `omnigate db seed-demo` run through commander against a real
 * PostgreSQL (the embedded test server, given as DATABASE_URL): nothing to index before the
 * tables exist, the tables created with --create-tables, indexes up to date after, a demo seeded
 * once and refused a second time, its progress reported from 2,000 bridges on; exit 2 for bad arguments or environment, 1 for a database that
 * does not answer; the password never printed.
 */
import net, { type AddressInfo } from 'node:net';
import test from 'ava';
import { Command, CommanderError } from 'commander';
import { registerDbCommands } from '../../../../lib/cli/db.js';
import { startTestDatabase, type TestDatabase } from '../../../support/pg.js';

let database: TestDatabase;
test.before(async () => {
  database = await startTestDatabase({ migrate: false });
});
test.after.always(async () => {
  await database?.close();
});

async function db(args: string[], env: Record<string, string>, progress: (line: string) => void = () => {}): Promise<{ lines: string[]; exitCode?: number; error?: string }> {
  const lines: string[] = [];
  const program = new Command().exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
  registerDbCommands(program, { env, print: (line) => lines.push(line), progress });
  const quiet = (c: Command) => { c.exitOverride().configureOutput({ writeErr: () => {} }); c.commands.forEach(quiet); };
  quiet(program);
  try {
    await program.parseAsync(['db', ...args], { from: 'user' });
    return { lines };
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    return { lines, exitCode: err.exitCode, error: err.message };
  }
}

const password = () => decodeURIComponent(new URL(database.url).password);

test.serial('migrate should say there is nothing to index before the tables exist', async (t) => {
  const r = await db(['migrate'], { DATABASE_URL: database.url });
  t.is(r.exitCode, undefined, r.error);
  t.is(r.lines.length, 1);
  t.regex(r.lines[0]!, /Nothing to index yet: start the Ponder indexer first/);
});

test.serial('migrate --create-tables should apply the migrations, then say the indexes are up to date', async (t) => {
  const created = await db(['migrate', '--create-tables'], { DATABASE_URL: database.url });
  t.is(created.exitCode, undefined, created.error);
  t.regex(created.lines[0]!, /^Applied \d+ migration\(s\) to postgres:\/\/.*: 0001_ponder_tables/);
  t.false(created.lines.join('\n').includes(password()));
  const again = await db(['migrate'], { DATABASE_URL: database.url });
  t.deepEqual(again.lines.map((l) => l.replace(/\(.*\)\.$/, '(…).')), ['Indexes are up to date on the ponder-0.4 tables in the search path (…).']);
});

test.serial('seed-demo should seed once and refuse to mix demo data in a second time', async (t) => {
  const seeded = await db(['seed-demo', '--count', '5'], { DATABASE_URL: database.url });
  t.is(seeded.exitCode, undefined, seeded.error);
  t.regex(seeded.lines[0]!, /^Seeded \d+ demo bridge transactions into postgres:\/\//);
  const { n } = await database.db.one<{ n: number }>('SELECT count(*)::int AS n FROM "BridgeRequestEvents"');
  t.true(n > 0);
  const again = await db(['seed-demo', '--count', '5'], { DATABASE_URL: database.url });
  t.is(again.exitCode, 1);
  t.regex(again.error!, /already holds \d+ bridge requests; refusing to mix demo data in/);
});

test.serial('seed-demo should report its progress from 2,000 bridges on: a first line, then at most one per tenth of the rows, the result apart', async (t) => {
  const small: string[] = [];
  const below = await db(['seed-demo', '--count', '1999', '--force'], { DATABASE_URL: database.url }, (line) => small.push(line));
  t.is(below.exitCode, undefined, below.error);
  t.deepEqual(small, [], 'below 2,000 bridges: no progress lines');
  const progress: string[] = [];
  const seeded = await db(['seed-demo', '--count', '2000', '--force'], { DATABASE_URL: database.url }, (line) => progress.push(line));
  t.is(seeded.exitCode, undefined, seeded.error);
  t.is(seeded.lines.length, 1, 'the result alone on stdout');
  t.regex(seeded.lines[0]!, /^Seeded \d+ demo bridge transactions into postgres:\/\//);
  const [first, ...tenths] = progress;
  t.is(first, 'seed-demo: generating 2000 demo bridge transactions…');
  t.true(tenths.length >= 1 && tenths.length <= 10, progress.join('\n'));
  for (const line of tenths) t.regex(line, /^seed-demo: \d+\/\d+ rows inserted \(\d+0%\)$/);
  t.regex(tenths.at(-1)!, /\(100%\)$/);
});

test.serial('should exit 2 for a bad --count or a DATABASE_URL that is not one', async (t) => {
  const count = await db(['seed-demo', '--count', '0'], { DATABASE_URL: database.url });
  t.is(count.exitCode, 2);
  t.regex(count.error!, /--count must be an integer from 1 to 1000000/);
  const url = await db(['migrate'], { DATABASE_URL: 'mysql://u:p@host/db' });
  t.is(url.exitCode, 2);
  t.regex(url.error!, /DATABASE_URL must be a postgres:\/\/ or postgresql:\/\/ URL/);
});

test.serial('should exit 1 for a database that does not answer, without its password', async (t) => {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  const r = await db(['migrate'], { DATABASE_URL: `postgres://u:pa55word@127.0.0.1:${port}/x`, OMNIGATE_DB_CONNECT_TIMEOUT_MS: '1000' });
  t.is(r.exitCode, 1);
  t.regex(r.error!, /^omnigate db migrate failed \(postgres:\/\//);
  t.false(r.error!.includes('pa55word'));
});
