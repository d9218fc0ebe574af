import test from 'ava';
import { indexerApi } from '../../../lib/indexer/api.js';
import { LIST_ROUTES } from '../../../lib/indexer/catalog.js';
import { generateDemo, insertEvents, type DemoState } from '../../../lib/indexer/seed.js';
import type { ListQueryName } from '../../../lib/indexer/read/queries.js';
import { startTestDatabase, type TestDatabase } from '../../support/pg.js';
import { get, serve, type Running } from '../../fixtures/indexer/server.js';

const NOW = 1_760_000_000;
const demo = generateDemo({ count: 700, now: NOW, seed: 42 });
let pg: TestDatabase;
let app: Running;

test.before(async () => {
  pg = await startTestDatabase();
  await insertEvents(pg.db, demo);
  app = await serve(indexerApi(pg.db, { now: () => NOW }));
});

test.after.always(async () => {
  await app?.close();
  await pg?.close();
});

const ids = (body: unknown) => (body as { Bridge?: { transactionId: string }; transactionId?: string }[])
  .map((i) => i.Bridge?.transactionId ?? i.transactionId!);

/** Which lists each generated state must appear in (and it must appear in no other). */
const MEMBERSHIP: Record<DemoState, ListQueryName[]> = {
  requested: ['missingRelay'],
  expired: ['exceedDeadline'],
  relayed: ['missingProof'],
  proven: ['missingClaim'],
  provenDisputed: ['missingProof', 'disputes'],
  disputedReproven: ['missingClaim'],
  claimed: [],
  refunded: [],
  refundedRelayed: ['refundedAndRelayed'],
  conflictingProof: ['conflictingProofs', 'missingClaim'],
  relayWithoutRequest: ['invalidRelays'],
};

test('each generated state shows up in exactly its lists', async (t) => {
  const lists = new Map<ListQueryName, Set<string>>();
  for (const route of LIST_ROUTES) {
    const res = await get(`${app.base}${route.paths[0]}?limit=1000`);
    t.is(res.status, 200);
    t.is(res.headers.get('x-next-cursor'), null);
    lists.set(route.query, new Set(ids(res.body)));
  }
  for (const [id, state] of demo.states) {
    for (const route of LIST_ROUTES) {
      t.is(lists.get(route.query)!.has(id), MEMBERSHIP[state].includes(route.query), `${state} ${id.slice(0, 10)} in ${route.query}`);
    }
  }
});

for (const route of LIST_ROUTES) {
  test(`${route.paths[0]}: walking pages of 7 returns every row exactly once, in order`, async (t) => {
    const all = ids((await get(`${app.base}${route.paths[0]}?limit=1000`)).body);
    t.true(all.length >= 7, `${all.length} rows to page through`);
    const walked: string[] = [];
    let next: string | null = `${route.paths[0]}?limit=7`;
    while (next) {
      const res: { body: unknown; headers: Headers } = await get(`${app.base}${next}`);
      walked.push(...ids(res.body));
      next = res.headers.get('link')?.match(/^<([^>]+)>/)?.[1] ?? null;
    }
    t.deepEqual(walked, all);
    t.is(new Set(walked).size, walked.length);
  });
}

test('chain filters partition a list', async (t) => {
  const all = ids((await get(`${app.base}/api/pending-transactions/missing-claim?limit=1000`)).body);
  const origins = new Set(demo.requests.map((r) => r.originChainId as number));
  let total = 0;
  for (const chain of origins) {
    const part = (await get<{ Bridge: { originChainId: number } }[]>(`${app.base}/api/pending-transactions/missing-claim?limit=1000&originChainId=${chain}`)).body;
    t.true(part.every((i) => i.Bridge.originChainId === chain));
    total += part.length;
  }
  t.is(total, all.length);
});
