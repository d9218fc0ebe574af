import { readFileSync } from 'node:fs';
import test from 'ava';
import { checkedUrlsValue, corsHeaders, creditHeaderNames, exposedHeaders, Header, wantsCors } from '../../../../lib/pipeline/headers.js';
import { fromRoot } from '../../../support/paths.js';

test('should list every URL when they fit', (t) => {
  t.is(checkedUrlsValue(['a', 'b', 'c']), 'a,b,c');
  t.is(checkedUrlsValue([]), '');
  t.is(checkedUrlsValue(['only']), 'only');
});

test('should cut the list at maxBytes and count the URLs left out', (t) => {
  t.is(checkedUrlsValue(['aaaa', 'bbbb', 'cccc', 'dddd'], 9), 'aaaa,bbbb,...(+2 more)');
  t.is(checkedUrlsValue(['aaaa', 'bbbb'], 9), 'aaaa,bbbb', 'exactly maxBytes fits');
  t.is(checkedUrlsValue(['a-very-long-url', 'b'], 4), 'a-very-long-url,...(+1 more)', 'the first URL is always named');
});

test('should keep 300 long URLs within the default 4 KiB', (t) => {
  const urls = Array.from({ length: 300 }, (_, i) => `https://node-${i}.provider.example/v2/***`);
  const value = checkedUrlsValue(urls);
  const m = /,\.\.\.\(\+(\d+) more\)$/.exec(value);
  t.truthy(m);
  const named = value.slice(0, m!.index).split(',');
  t.true(named.join(',').length <= 4096);
  t.is(named.length + Number(m![1]), 300);
  t.deepEqual(named, urls.slice(0, named.length));
});

test('should spell the header names as the spec does, and expose them all to browsers', (t) => {
  t.deepEqual(Object.values(Header), ['X-Checked-URLS', 'X-Confirmable', 'X-Forwarded-From', 'X-Json-Hash', 'X-Request-Id', 'X-Required-Confirmations', 'X-Cache', 'X-Verified-By', 'X-Block-Hash', 'X-Attestation', 'X-Attestation-Key']);
  t.is(exposedHeaders, 'X-Checked-URLS, X-Confirmable, X-Forwarded-From, X-Json-Hash, X-Request-Id, X-Required-Confirmations, X-Cache, X-Verified-By, X-Block-Hash, X-Attestation, X-Attestation-Key, Age, X-Credits, X-Credits-Remaining-Second, X-Credits-Remaining-Day, Retry-After');
  t.deepEqual(corsHeaders, ['Access-Control-Allow-Origin', '*', 'Access-Control-Expose-Headers', exposedHeaders]);
});

test('should want CORS headers only for a request with an Origin', (t) => {
  t.true(wantsCors({ headers: { origin: 'https://app.example' } }));
  t.true(wantsCors({ headers: { origin: '' } }));
  t.false(wantsCors({ headers: {} }));
});

/** The header names of the README's "Headers at a glance" table (its first column, in backticks). */
function readmeHeaderNames(): string[] {
  const readme = readFileSync(fromRoot('README.md'), 'utf8');
  const start = readme.indexOf('### Headers at a glance');
  const end = readme.indexOf('\n## ', start);
  const names: string[] = [];
  for (const m of readme.slice(start, end).matchAll(/^\| ([^|]+) \|/gm)) {
    for (const name of m[1]!.matchAll(/`([A-Za-z-]+)`/g)) names.push(name[1]!);
  }
  return names;
}

test('the README\'s header table should name every header omnigate adds to an answer, and no other', (t) => {
  const names = readmeHeaderNames();
  t.true(names.length > 0, 'README.md has a "Headers at a glance" table');
  // The answer headers are the ones exposed to browsers; WWW-Authenticate rides on the 401 alone.
  t.deepEqual([...names].sort(), [...exposedHeaders.split(', '), 'WWW-Authenticate'].sort());
  for (const name of creditHeaderNames) t.true(names.includes(name), name);
});
