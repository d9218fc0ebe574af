import test from 'ava';
import { redactUrl, secretsOf } from '../../../../lib/upstream/redact.js';

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
