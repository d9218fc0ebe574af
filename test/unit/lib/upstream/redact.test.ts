import test from 'ava';
import { echoerOf, keyLabel, redactUrl, redactCredentials, redactRedisUrl, scrubberOf, secretsOf } from '../../../../lib/upstream/redact.js';

const infuraKey = '9aa3d95b3bc440fa88ea12eaa4456161';
const alchemyKey = 'Xy7kP2mQ9vR4tL8nB3wE6aZ1cF5gH0jD';
const quicknodeKey = '0f1e2d3c4b5a69788796a5b4c3d2e1f0a1b2c3d4';
const ankrKey = 'a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90';

/** URL as configured → as logs, /chains and error data show it, and the secrets it hides. */
const cases: [string, string, string, string[]][] = [
  ['Infura /v3/KEY', `https://mainnet.infura.io/v3/${infuraKey}`, 'https://mainnet.infura.io/v3/***', [infuraKey]],
  ['Alchemy /v2/KEY', `https://eth-mainnet.g.alchemy.com/v2/${alchemyKey}`, 'https://eth-mainnet.g.alchemy.com/v2/***', [alchemyKey]],
  ['QuickNode /KEY/', `https://old-red-sun.quiknode.pro/${quicknodeKey}/`, 'https://old-red-sun.quiknode.pro/***/', [quicknodeKey]],
  ['Ankr /eth/KEY', `https://rpc.ankr.com/eth/${ankrKey}`, 'https://rpc.ankr.com/eth/***', [ankrKey]],
  ['?apikey=KEY', 'https://api.etherscan.example/rpc?module=proxy&apikey=SECRETKEY123', 'https://api.etherscan.example/rpc?module=***&apikey=***', ['SECRETKEY123']],
  ['user:pass@', 'https://alice:s3cr3t-passw0rd@node.example.com/rpc', 'https://***@node.example.com/rpc', ['s3cr3t-passw0rd']],
  ['a percent-encoded password', 'https://bob:p%40ss%2Fword99@node.example.com/', 'https://***@node.example.com', ['p@ss/word99']],
  ['wss Infura /ws/v3/KEY', `wss://mainnet.infura.io/ws/v3/${infuraKey}`, 'wss://mainnet.infura.io/ws/v3/***', [infuraKey]],
  ['wss Alchemy', `wss://eth-mainnet.g.alchemy.com/v2/${alchemyKey}`, 'wss://eth-mainnet.g.alchemy.com/v2/***', [alchemyKey]],
  ['ws with a port and no key', 'ws://localhost:8546', 'ws://localhost:8546', []],
  ['a public URL without a key', 'https://cloudflare-eth.com/', 'https://cloudflare-eth.com', []],
  ['a public URL with word segments', 'https://arb1.arbitrum.io/rpc', 'https://arb1.arbitrum.io/rpc', []],
  ['a port kept', 'http://10.0.0.5:8545/', 'http://10.0.0.5:8545', []],
  ['a long word segment', 'https://rpc.example/mainnetarchivenode', 'https://rpc.example/***', ['mainnetarchivenode']],
  ['a segment with many digits', 'https://rpc.example/node12345', 'https://rpc.example/***', ['node12345']],
  // A short key: under 12 characters and 3 digits, but random (digits among letters, cases mixed).
  ['a short key with digits among its letters', 'https://rpc.example/v1/k3j9xmqwpazt', 'https://rpc.example/v1/***', ['k3j9xmqwpazt']],
  ['a short key of mixed case', 'https://rpc.example/eth/aBcDeFgHiJ', 'https://rpc.example/eth/***', ['aBcDeFgHiJ']],
  ['a short key as a query name', 'https://rpc.example/eth?xK4mP9', 'https://rpc.example/eth?***=***', ['xK4mP9']],
  ['Avalanche C-chain path', 'https://api.avax.network/ext/bc/C/rpc', 'https://api.avax.network/ext/bc/C/rpc', []],
  ['capitalized and versioned words', 'https://rpc.example/Mainnet/eth2-v1/RPC_node', 'https://rpc.example/Mainnet/eth2-v1/RPC_node', []],
  // A key in the host name: the label left of the registered name, when it looks random.
  ['a host key (mixed letters and digits)', 'https://abc123def456ghi789.quiknode.pro/', 'https://***.quiknode.pro', ['abc123def456ghi789']],
  ['a host key with a path key too', `https://a1b2c3d4e5f6a7b8.eth.example.io/${infuraKey}`, 'https://***.eth.example.io/***', ['a1b2c3d4e5f6a7b8', infuraKey]],
  ['a host key in upper case', 'https://ABC123DEF456GHI.node.example/rpc', 'https://***.node.example/rpc', ['abc123def456ghi', 'ABC123DEF456GHI']],
  ['a UUID host label', 'https://123e4567-e89b-12d3-a456-426614174000.rpc.example.com/', 'https://***.rpc.example.com', ['123e4567-e89b-12d3-a456-426614174000']],
  ['a long hex host label with a port', 'wss://0f1e2d3c4b5a69788796a5b4.ws.example:8546/', 'wss://***.ws.example:8546', ['0f1e2d3c4b5a69788796a5b4']],
  ['a numeric account label', 'https://4815162342.rpc.example/', 'https://***.rpc.example', ['4815162342']],
  ['a key as a query name', 'https://rpc.example/eth?abcdef123456ghij', 'https://rpc.example/eth?***=***', ['abcdef123456ghij']],
  ['a drpc dkey', 'https://lb.drpc.org/ogrpc?network=ethereum&dkey=Ak80gSCleU1Frwnafb5Ka4VRKGAHTlER7oyYPpUhemBL', 'https://lb.drpc.org/ogrpc?network=***&dkey=***', ['Ak80gSCleU1Frwnafb5Ka4VRKGAHTlER7oyYPpUhemBL']],
  // Ordinary host names are kept whole.
  ['Alchemy host', 'https://eth-mainnet.g.alchemy.com/v2/demo', 'https://eth-mainnet.g.alchemy.com/v2/demo', []],
  ['Ankr host', 'https://rpc.ankr.com/eth', 'https://rpc.ankr.com/eth', []],
  ['PublicNode host', 'https://ethereum-rpc.publicnode.com', 'https://ethereum-rpc.publicnode.com', []],
  ['1rpc host', 'https://1rpc.io/eth', 'https://1rpc.io/eth', []],
  ['Infura host', 'https://mainnet.infura.io/v3/', 'https://mainnet.infura.io/v3/', []],
  ['Binance data seed', 'https://bsc-dataseed1.binance.org/', 'https://bsc-dataseed1.binance.org', []],
  ['Chainstack node name', 'https://nd-123-456-789.p2pify.com/', 'https://nd-123-456-789.p2pify.com', []],
  ['QuickNode name', 'https://old-red-sun.quiknode.pro/', 'https://old-red-sun.quiknode.pro', []],
  ['a long hyphenated name', 'https://avalanche-c-chain-rpc.publicnode.com/', 'https://avalanche-c-chain-rpc.publicnode.com', []],
  ['zkSync', 'https://zksync2-mainnet.zksync.io/', 'https://zksync2-mainnet.zksync.io', []],
  ['a key-like registered name (kept: it is the provider)', 'https://rpc.builder0x69.io/', 'https://rpc.builder0x69.io', []],
  ['an IPv4 host', 'http://192.168.100.200:8545/', 'http://192.168.100.200:8545', []],
  ['an IPv6 host', 'http://[2001:db8::1234:5678]:8545/', 'http://[2001:db8::1234:5678]:8545', []],
];

for (const [name, url, redacted, secrets] of cases) {
  test(`should redact ${name}`, (t) => {
    t.is(redactUrl(url), redacted);
  });
  test(`should list the hidden parts of ${name}`, (t) => {
    const found = secretsOf(url);
    for (const s of secrets) t.true(found.includes(s), `${s} in ${JSON.stringify(found)}`);
    if (secrets.length === 0) t.deepEqual(found, []);
  });
  test(`should leave no hidden part of ${name} in the redacted URL`, (t) => {
    const shown = redactUrl(url);
    const leaked = [...secretsOf(url), ...secrets].filter((s) => shown.includes(s));
    t.deepEqual(leaked, []);
  });
}

test('should redact text that is not a URL completely', (t) => {
  t.is(redactUrl('not a url with KEY123456'), '***');
  t.is(redactUrl(''), '***');
});

test('should hide the whole text when it is not a URL', (t) => {
  t.deepEqual(secretsOf('garbage-secret'), ['garbage-secret']);
  t.deepEqual(secretsOf('abc'), []);
});

test('should leave out parts shorter than 6 characters', (t) => {
  t.deepEqual(secretsOf('https://u:p@node.example/'), []);
});

test('should hide the user-info as the Basic credentials it is sent as, decoded or as written, padded or not', (t) => {
  const found = secretsOf('https://bob:p%40ss%2Fword99@node.example/');
  const decoded = Buffer.from('bob:p@ss/word99').toString('base64');
  const written = Buffer.from('bob:p%40ss%2Fword99').toString('base64');
  t.not(decoded, written);
  for (const s of [decoded, decoded.replace(/=+$/, ''), written, written.replace(/=+$/, '')]) t.true(found.includes(s), `${s} in ${JSON.stringify(found)}`);
  t.is(scrubberOf(found)(`header: Basic ${decoded}`), 'header: Basic ***');
  t.false(secretsOf('https://node.example/rpc').some((s) => s.length > 0));
});

test('should drop the fragment', (t) => {
  t.is(redactUrl('https://node.example/rpc#frag'), 'https://node.example/rpc');
});

// A stray % in a configured URL passes `new URL()` (and config validation), so redaction must
// survive it: it runs in logs, /chains and every 502's error data.
const malformed = ['https://rpc.example/%E0%A4%A', 'https://rpc.example/v2/%ZZsecretkey'];
for (const url of malformed) {
  test(`should not throw on the malformed percent-encoding of ${url}`, (t) => {
    t.notThrows(() => redactUrl(url));
    t.notThrows(() => secretsOf(url));
  });
}

const words = ['eth-mainnet', 'rpc', 'ethereum-rpc', 'mainnet', 'arb1', 'bsc-dataseed1', 'nd-123-456-789', 'polygon-mainnet', 'base-mainnet', 'ethereum-mainnet-archive', 'opt-mainnet', 'zksync2-mainnet', 'go', 'lb', 'eth1', 'virginia'];
const keys = ['abc123def456', 'a1b2c3d4e5f6', '9aa3d95b3bc440fa88ea12eaa4456161', '12345678', 'xk4mzqpwrtvbnhjsdlgfyceaoi', '123e4567-e89b-12d3-a456-426614174000'];

test('should tell key-like host labels from names', (t) => {
  t.deepEqual(words.filter(keyLabel), []);
  t.deepEqual(keys.filter((k) => !keyLabel(k)), []);
});

test('should list each hidden part also as it may be echoed: percent-encoded, decoded, JSON-escaped', (t) => {
  const found = secretsOf('https://bob:p%40ss%2Fword99%22@node.example.com/');
  for (const form of ['p@ss/word99"', 'p%40ss%2Fword99%22', 'p@ss/word99\\"']) t.true(found.includes(form), `${form} in ${JSON.stringify(found)}`);
});

test('should list a query value and a secret-looking name also as they are sent: a + kept, an escape as written', (t) => {
  const found = secretsOf('https://node.example.com/rpc?apikey=Ab+Cd123456/x==&T0k3nN4me123=v%3d%3dalue9');
  for (const form of ['Ab+Cd123456/x==', 'Ab Cd123456/x==', 'T0k3nN4me123', 'v%3d%3dalue9', 'v==alue9']) t.true(found.includes(form), `${form} in ${JSON.stringify(found)}`);
  t.false(found.includes('apikey'), 'a word-like name is not a secret');
});

test('should scrub every secret from a text, longest first and in any case', (t) => {
  const url = `https://abc123def456ghi789.quiknode.pro/v3/${infuraKey}`;
  const scrub = scrubberOf(secretsOf(url));
  const page = `<h1>404</h1><p>${url} (${encodeURIComponent(url)}) not found; host ABC123DEF456GHI789.QUIKNODE.PRO, key ${infuraKey.toUpperCase()}</p>`;
  const clean = scrub(page);
  t.false(clean.toLowerCase().includes(infuraKey));
  t.false(clean.toLowerCase().includes('abc123def456ghi789'));
  t.true(clean.includes('https://***.quiknode.pro/v3/***'));
  t.is(scrubberOf([])('unchanged text'), 'unchanged text');
  t.is(scrubberOf(['a.b*c'])('x a.b*c y aXbbc'), 'x *** y aXbbc', 'secrets are matched literally');
});

test('should find an echoed secret in any case, literally, by its bytes', (t) => {
  const echoed = echoerOf([alchemyKey, 'k\u00e9y.w1th*marks']);
  t.true(echoed(Buffer.from(`{"error":{"message":"key ${alchemyKey} refused"}}`)));
  t.true(echoed(Buffer.from(`{"error":{"message":"KEY ${alchemyKey.toUpperCase()} REFUSED"}}`)), 'upper-cased');
  t.true(echoed(Buffer.from(`"${alchemyKey.toLowerCase()}"`)), 'lower-cased');
  t.true(echoed(Buffer.from('"k\u00e9y.W1TH*MARKS"')), 'a non-ASCII secret by its UTF-8 bytes, its ASCII letters in any case');
  t.false(echoed(Buffer.from('"kXy.w1thhmarks"')), 'matched literally');
  t.false(echoed(Buffer.from(`"${alchemyKey.slice(0, -1)}"`)), 'not a part of it');
  t.false(echoerOf([])(Buffer.from(alchemyKey)));
});

test('redactRedisUrl hides the password wherever ioredis reads it: user-info, a lone user, a query parameter', (t) => {
  t.is(redactRedisUrl('redis://default:s3cret@cache.internal:6379/2'), 'redis://default:***@cache.internal:6379/2');
  t.is(redactRedisUrl('redis://s3cret@cache.internal:6379'), 'redis://***@cache.internal:6379');
  t.is(redactRedisUrl('rediss://cache.internal:6380/0?password=s3cret&family=6'), 'rediss://cache.internal:6380/0?password=***&family=***');
  t.is(redactRedisUrl('redis://127.0.0.1:6379/0'), 'redis://127.0.0.1:6379/0');
  t.is(redactRedisUrl('not a url s3cret'), 'redis (unparsable URL)');
});

test('redactCredentials hides passwords and secret-looking query parameters, in URLs and in free text', (t) => {
  t.is(redactCredentials('postgres://user:pa%40ss@db.example:5432/index'), 'postgres://user:***@db.example:5432/index');
  t.is(redactCredentials('postgresql://db/index?sslmode=require&password=x'), 'postgresql://db/index?sslmode=require&password=***');
  t.is(redactCredentials('postgres://user@db/index'), 'postgres://user@db/index');
  t.is(redactCredentials('failed for postgres://u:p@h/db and //x:y@z'), 'failed for postgres://u:***@h/db and //x:***@z');
  // Free text that opens with `word:` parses as a URL of that scheme: still free text.
  t.is(redactCredentials('connect: postgres://u:hunter2pw@h/db failed'), 'connect: postgres://u:***@h/db failed');
  t.is(redactCredentials('Error: at postgres://u:hunter2pw@h/db\n    at f (file.js:1:2)'), 'Error: at postgres://u:***@h/db\n    at f (file.js:1:2)');
});
