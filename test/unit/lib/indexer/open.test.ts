/**
 * openIndexerDb with a DATABASE_URL, against a port where nothing listens (no server is started):
 * without migrations it returns the database at once, logging the URL with its password masked;
 * with migrations their failure is thrown (and the pool closed: nothing keeps this file's worker alive).
 */
import net, { type AddressInfo } from 'node:net';
import test from 'ava';
import { openIndexerDb } from '../../../../lib/indexer/open.js';
import type { Logger } from '../../../../lib/log.js';
import { silentLogger } from '../../../../lib/log.js';

/** A port nothing listens on (bound, then released). */
async function deadPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function logger() {
  const lines: string[] = [];
  const log = { ...silentLogger, info: (obj: unknown, msg?: string) => lines.push(`${msg} ${JSON.stringify(obj)}`), child: () => log } as unknown as Logger;
  return { log, lines };
}

test('should return a DATABASE_URL\'s database without migrating, and log the URL without its password', async (t) => {
  const url = `postgres://reader:pa55word@127.0.0.1:${await deadPort()}/bridges`;
  const { log, lines } = logger();
  const open = await openIndexerDb({ databaseUrl: url, migrate: false, logger: log, connectTimeoutMs: 1000 });
  try {
    t.false(open.embedded);
    t.deepEqual(open.applied, []);
    t.truthy(open.db);
    t.is(lines.length, 1);
    t.regex(lines[0]!, /^indexer database: DATABASE_URL /);
    t.false(lines[0]!.includes('pa55word'));
  } finally {
    await open.close();
  }
});

test('should throw the migrations\' failure when asked to migrate a database that does not answer', async (t) => {
  const url = `postgres://reader:pa55word@127.0.0.1:${await deadPort()}/bridges`;
  const err = await t.throwsAsync(openIndexerDb({ databaseUrl: url, migrate: true, connectTimeoutMs: 1000 }));
  t.truthy(err);
  t.false(String(err?.message).includes('pa55word'), 'the password is not in the error');
});
