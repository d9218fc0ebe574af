import test from 'ava';
import { LIST_QUERY_NAMES, WINDOW_DEFAULTS, listStatement } from '../../../../../lib/indexer/read/queries.js';

const ctx = { now: 1_760_000_000, ...WINDOW_DEFAULTS };
const hostile = `0x'); DROP TABLE "BridgeRequestEvents"; --`;

for (const name of LIST_QUERY_NAMES) {
  test(`${name}: every value is a bound parameter, never spliced into the SQL`, (t) => {
    const st = listStatement(name, {
      limit: 10, cursor: { ts: 123, id: hostile }, originChainId: 42161, destChainId: 8453, since: 100, until: 999,
    }, { ...ctx, lookbackFloor: 1722729600 });
    t.false(st.text.includes('DROP'));
    for (const literal of ['42161', '8453', '999', '123', '1722729600', String(ctx.now - WINDOW_DEFAULTS.missingRelayWindowSeconds)]) {
      t.false(new RegExp(`\\b${literal}\\b`).test(st.text), `${literal} not in SQL text`);
    }
    t.true(st.values.includes(hostile));
    const placeholders = new Set([...st.text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
    t.deepEqual([...placeholders].sort((a, b) => a - b), st.values.map((_, i) => i + 1));
    // The page size is the one literal: a validated integer, one row more than the limit.
    t.regex(st.text, /ORDER BY \S+ DESC, \S+ DESC\nLIMIT 11$/);
  });

  test(`${name}: unfiltered, the statement has no parameters (so it can be prepared once)`, (t) => {
    const st = listStatement(name, { limit: 100 }, ctx);
    // The windowed lists bind their window's edge, computed from the request's clock; the
    // relay lists also the clock the deadlines are compared with, exceed-deadline the edge of the
    // relays and refunds it reads for the window's requests.
    const bound = { missingRelay: 2, exceedDeadline: 3, invalidRelays: 1 } as Record<string, number>;
    t.is(st.values.length, bound[name] ?? 0);
    t.regex(st.text, /\nLIMIT 101$/);
  });
}

test('a LIMIT that is not a safe integer never reaches the SQL', (t) => {
  for (const limit of [Number.NaN, 1.5, Number.POSITIVE_INFINITY, '5; DROP TABLE x' as unknown as number]) {
    t.throws(() => listStatement('missingClaim', { limit }, ctx), { instanceOf: TypeError });
  }
});

test('the lookback floor only applies when set, and only to request-based lists', (t) => {
  t.notRegex(listStatement('missingRelay', { limit: 1 }, ctx).text, /r\."blockTimestamp" >=/);
  t.regex(listStatement('missingRelay', { limit: 1 }, { ...ctx, lookbackFloor: 5 }).text, /r\."blockTimestamp" >=/);
  t.notRegex(listStatement('invalidRelays', { limit: 1 }, { ...ctx, lookbackFloor: 5 }).text, />= \$/);
  t.notRegex(listStatement('disputes', { limit: 1 }, { ...ctx, lookbackFloor: 5 }).text, />= \$/);
});
