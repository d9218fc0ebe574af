import test from 'ava';
import type { IncomingMessage } from 'node:http';
import { canonicalChainId, matchRpcRoute, parseConfirmations, shownPath, shownRouteValue, type RpcRoute } from '../../../../lib/pipeline/route.js';

const routes: [string, RpcRoute | undefined][] = [
  ['/rpc/1', { chainId: '1' }],
  ['/rpc/1/', { chainId: '1' }],
  ['/rpc/42161', { chainId: '42161' }],
  ['/confirmations/2/rpc/1', { chainId: '1', confirmations: '2' }],
  ['/confirmations/2/rpc/1/', { chainId: '1', confirmations: '2' }],
  ['/confirmations/abc/rpc/1', { chainId: '1', confirmations: 'abc' }],
  ['/confirmations//rpc/1', { chainId: '1', confirmations: '' }],
  ['/rpc/abc', { chainId: 'abc' }],
  ['/rpc/', { chainId: '' }],
  ['/rpc/%31', { chainId: '1' }],
  ['/rpc/%E0%A4%A', { chainId: '%E0%A4%A' }],
  ['/rpc', undefined],
  ['/rpc/1/extra', { chainId: '1', key: 'extra' }],
  ['/rpc/1/k3y-Value_0123456789/', { chainId: '1', key: 'k3y-Value_0123456789' }],
  ['/confirmations/2/rpc/1/k3y', { chainId: '1', confirmations: '2', key: 'k3y' }],
  ['/finalized/rpc/1/k3y', { chainId: '1', finalized: true, key: 'k3y' }],
  ['/confirmations/3/finalized/rpc/10/k3y', { chainId: '10', confirmations: '3', finalized: true, key: 'k3y' }],
  ['/rpc/1/k%65y', { chainId: '1', key: 'key' }],
  ['/rpc/1/extra/more', undefined],
  ['/rpc/1//', undefined],
  ['/RPC/1', undefined],
  ['/api/rpc/1', undefined],
  ['/confirmations/2/rpc', undefined],
  ['/confirmations/2/1', undefined],
  ['rpc/1', undefined],
  ['/', undefined],
];
for (const [path, expected] of routes) {
  test(`should match ${JSON.stringify(path)} as ${JSON.stringify(expected)}`, (t) => {
    t.deepEqual(matchRpcRoute(path), expected);
  });
}

test('should leave confirmations out of a plain /rpc route', (t) => {
  t.false('confirmations' in matchRpcRoute('/rpc/1')!);
});

const chainIds: [string, string | undefined][] = [
  ['1', '1'],
  ['0', '0'],
  ['01', '1'],
  ['000', '0'],
  ['42161', '42161'],
  ['9007199254740993', '9007199254740993'],
  ['18446744073709551617', '18446744073709551617'],
  ['123456789012345678901234567890', '123456789012345678901234567890'],
  ['1234567890123456789012345678901', '1234567890123456789012345678901'],
  ['-1', undefined],
  ['1.5', undefined],
  ['1e3', undefined],
  ['0x1', undefined],
  ['abc', undefined],
  ['', undefined],
  [' 1', undefined],
  ['1 ', undefined],
  ['+1', undefined],
  ['１', undefined],
];
for (const [text, expected] of chainIds) {
  test(`should read chain id ${JSON.stringify(text)} as ${JSON.stringify(expected)}`, (t) => {
    t.is(canonicalChainId(text), expected);
  });
}

test('should keep chain ids above 2^53 exact', (t) => {
  const id = (2n ** 64n + 1n).toString();
  t.is(canonicalChainId(id), id);
  t.not(String(Number(id)), id, 'Number() would have rounded it');
});

const confirmations: [string, number | undefined][] = [
  ['1', 1],
  ['2', 2],
  ['01', 1],
  ['10', 10],
  ['999999', 999999],
  ['0', undefined],
  ['00', undefined],
  ['-1', undefined],
  ['1.5', undefined],
  ['1.0', undefined],
  ['abc', undefined],
  ['', undefined],
  ['1e2', undefined],
  ['0x2', undefined],
  [' 2', undefined],
  ['2 ', undefined],
  ['+2', undefined],
];
for (const [text, expected] of confirmations) {
  test(`should read confirmations ${JSON.stringify(text)} as ${JSON.stringify(expected)}`, (t) => {
    t.is(parseConfirmations(text), expected);
  });
}

// Spec B3: "<n> must be a positive decimal integer; anything else is a 400 [...]. N larger than the
// chain's usable upstreams is a 400 JSON-RPC error that says how many there are." A large <n> is
// a positive integer, so it must reach the upstream-count check (-32003), not be refused as
// malformed (-32002).
test('should read any positive decimal integer, however large, as confirmations', (t) => {
  t.is(parseConfirmations('1000000'), 1000000);
});

test('the finalized route, with and without <n>', (t) => {
  t.deepEqual(matchRpcRoute('/finalized/rpc/1'), { chainId: '1', finalized: true });
  t.deepEqual(matchRpcRoute('/confirmations/3/finalized/rpc/10/'), { chainId: '10', confirmations: '3', finalized: true });
  t.is(matchRpcRoute('/finalized/confirmations/3/rpc/10'), undefined);
  t.is(matchRpcRoute('/finalised/rpc/1'), undefined);
});

test('shownPath should mask a key in the path, and leave other paths as they are', (t) => {
  const req = (url: string) => ({ url }) as IncomingMessage;
  t.is(shownPath(req('/rpc/1/s3cret-key-0123456789')), '/rpc/1/***');
  t.is(shownPath(req('/confirmations/2/finalized/rpc/1/s3cret-key-0123456789/?x=1')), '/confirmations/2/finalized/rpc/1/***/');
  t.is(shownPath(req('/rpc/1')), '/rpc/1');
  t.is(shownPath(req('/api/stats')), '/api/stats');
  t.is(shownPath(req('/confirmations/2/rpc/8453')), '/confirmations/2/rpc/8453');
  // a key written where the chain id or <n> goes (as Infura's /v3/KEY)
  t.is(shownPath(req('/rpc/s3cret-key-0123456789')), '/rpc/***');
  t.is(shownPath(req('/finalized/rpc/s3cret-key-0123456789/')), '/finalized/rpc/***/');
  t.is(shownPath(req('/confirmations/s3cret-key-0123456789/rpc/1/s3cret-key-0123456789')), '/confirmations/***/rpc/1/***');
  t.is(shownPath(req('/rpc/abc')), '/rpc/abc');
});

test('shownPath should mask what may be a client key in a path that is no RPC route, and keep words and numbers', (t) => {
  const req = (url: string) => ({ url }) as IncomingMessage;
  const key = 's3cretKey0123456789';
  t.is(shownPath(req(`/rpc/1/${key}/x`)), '/rpc/1/***/x');
  t.is(shownPath(req(`/rpc/1/${key}//`)), '/rpc/1/***//');
  t.is(shownPath(req(`/rpc/1//${key}`)), '/rpc/1//***');
  t.is(shownPath(req(`//rpc/1/${key}?q=1`)), '//rpc/1/***');
  t.is(shownPath(req(`/RPC/1/${key}`)), '/RPC/1/***');
  t.is(shownPath(req(`/rpc/1/${encodeURIComponent('a key/with slash')}/x`)), '/rpc/1/***/x');
  t.is(shownPath(req('/v1/rpc/42161/eth_call/v2')), '/v1/rpc/42161/eth_call/v2');
  t.is(shownPath(req('/api/bridges/0x5c69bee701ef814a2b6a3edd4b1652cb9cc5aa6f')), '/api/bridges/***');
  // A short key of mixed case where no key is looked for: not a word either.
  t.is(shownPath(req('/aBcDeFgHiJ/rpc/1')), '/***/rpc/1');
  t.is(shownPath(req('/Api/RPC/stats')), '/Api/RPC/stats');
});

test('shownRouteValue should quote a short chain id or <n> as written, and only the length of a long one', (t) => {
  t.is(shownRouteValue('abc'), '"abc"');
  t.is(shownRouteValue('-1'), '"-1"');
  t.is(shownRouteValue('123456789012'), '"123456789012"');
  const shown = shownRouteValue('s3cret-key-0123456789');
  t.false(shown.includes('s3cret'));
  t.regex(shown, /21 characters, not shown/);
});
