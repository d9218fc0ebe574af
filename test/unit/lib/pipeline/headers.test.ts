import test from 'ava';
import { checkedUrlsValue, corsHeaders, exposedHeaders, Header, wantsCors } from '../../../../lib/pipeline/headers.js';

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
