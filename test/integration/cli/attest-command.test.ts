/**
 * `omnigate attest` as a user runs it (the built CLI, real processes): keygen writes the private
 * key with mode 0600 and never over an existing file; `omnigate serve` with that keyFile signs a
 * confirmed answer; `attest verify` says valid (exit 0) for it and its body, invalid with the
 * reason (exit 1) for a changed body or another key, and exit 2 on bad usage. Neither the private
 * key nor a provider key reaches the server's output.
 */
import test from 'ava';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finalizedChain, startFakeUpstream } from '../../support/fake-upstream.js';
import { rpc, send } from '../../support/gateway.js';
import { listeningPort, runCli } from '../../support/cli.js';

async function tempDir(t: { teardown(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'omnigate-attest-'));
  t.teardown(() => rm(dir, { recursive: true }));
  return dir;
}

const done = async (r: ReturnType<typeof runCli>) => ({ code: await r.exited, out: r.out.join(''), err: r.err.join('') });

test('keygen writes the private key 0600 and prints the public key and key id; it never overwrites a file', async (t) => {
  const dir = await tempDir(t);
  const file = join(dir, 'attest.pem');
  const r = await done(runCli(['attest', 'keygen', '--out', file], {}, { t }));
  t.is(r.code, 0, r.err);
  t.is((await stat(file)).mode & 0o777, 0o600);
  t.regex(await readFile(file, 'utf8'), /^-----BEGIN PRIVATE KEY-----\n/);
  t.false(r.out.includes('PRIVATE KEY'), 'the private key is not printed');
  t.regex(r.out, /-----BEGIN PUBLIC KEY-----/);
  t.regex(r.out, /^publicKeyHex: [0-9a-f]{64}$/m);
  t.regex(r.out, /^keyId: [0-9a-f]{16}$/m);
  const again = await done(runCli(['attest', 'keygen', '--out', file], {}, { t }));
  t.is(again.code, 2);
  t.regex(again.err, /the file exists/);
  const toStdout = await done(runCli(['attest', 'keygen'], {}, { t }));
  t.is(toStdout.code, 0);
  t.regex(toStdout.out, /-----BEGIN PRIVATE KEY-----[\s\S]+-----BEGIN PUBLIC KEY-----/);
});

test('serve signs a confirmed answer with the keyFile\'s key; attest verify checks it: 0 valid, 1 invalid with the reason, 2 bad usage', async (t) => {
  const dir = await tempDir(t);
  const keyFile = join(dir, 'attest.pem');
  const gen = await done(runCli(['attest', 'keygen', '--out', keyFile], {}, { t }));
  t.is(gen.code, 0, gen.err);
  const publicHex = /^publicKeyHex: ([0-9a-f]{64})$/m.exec(gen.out)![1]!;
  const privatePem = await readFile(keyFile, 'utf8');
  const secret = 'c0ffee00c0ffee00c0ffee00c0ffee00';
  const fakes = await Promise.all([0, 1].map(() => startFakeUpstream({ path: `/v3/${secret}`, answer: finalizedChain(() => 0x5a) })));
  t.teardown(() => Promise.all(fakes.map((f) => f.close())));
  const config = join(dir, 'omnigate.yaml');
  await writeFile(config, ['confirmations: 2', 'attest:', `  keyFile: ${keyFile}`, 'chains:', '  1337:', '    rpcs:', ...fakes.map((f) => `      - ${f.url}`), ''].join('\n'));
  const server = runCli(['serve', '--config', config, '--port', '0', '--no-indexer'], { LOG_LEVEL: 'debug' }, { t });
  const port = await listeningPort(server);
  const answer = await send(`http://127.0.0.1:${port}`, 'POST', '/rpc/1337', JSON.stringify(rpc('eth_getBalance', ['0x1111111111111111111111111111111111111111', '0x10'])), { 'content-type': 'application/json' });
  t.is(answer.status, 200, answer.text);
  const attestation = String(answer.headers['x-attestation']);
  t.regex(attestation, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  await server.stop();
  const output = server.out.join('') + server.err.join('');
  const pemBody = privatePem.split('\n')[1]!;
  t.false(output.includes(pemBody), 'the private key is in the server output');
  t.false(output.includes(secret), 'a provider key is in the server output');

  const body = join(dir, 'body.json');
  await writeFile(body, answer.text);
  const valid = await done(runCli(['attest', 'verify', '--key', publicHex, '--body', body, attestation], {}, { t }));
  t.is(valid.code, 0, valid.err);
  const statement = JSON.parse(valid.out) as { chain: string; answer: string; quorum: string[] };
  t.is(statement.chain, '1337');
  t.is(statement.answer, String(answer.headers['x-json-hash']));
  t.deepEqual(statement.quorum, String(answer.headers['x-checked-urls']).split(','));
  t.false(valid.out.includes(secret));

  // The key as a PEM file (the keygen's private key file holds the public key too).
  t.is((await done(runCli(['attest', 'verify', '--key', keyFile, attestation], {}, { t }))).code, 0);

  const changed = join(dir, 'changed.json');
  await writeFile(changed, answer.text.replace(/"result":"0x[0-9a-f]+"/, '"result":"0x2"'));
  const tampered = await done(runCli(['attest', 'verify', '--key', publicHex, '--body', changed, attestation], {}, { t }));
  t.is(tampered.code, 1);
  t.regex(tampered.err, /invalid: the answer's hash is [0-9a-f]{64}, the statement signs [0-9a-f]{64}: the body is not the answer attested/);

  // Another valid Ed25519 public key (RFC 8032, test 2).
  const other = await done(runCli(['attest', 'verify', '--key', '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c', attestation], {}, { t }));
  t.is(other.code, 1);
  t.regex(other.err, /invalid: the signature does not match/);

  const badKey = await done(runCli(['attest', 'verify', '--key', 'ab'.repeat(31), attestation], {}, { t }));
  t.is(badKey.code, 2);
  t.regex(badKey.err, /--key is not an Ed25519 public key/);
  t.is((await done(runCli(['attest', 'verify', attestation], {}, { t }))).code, 2, 'no --key');
  t.is((await done(runCli(['attest', 'verify', '--key', publicHex, '--body', join(dir, 'none.json'), attestation], {}, { t }))).code, 2, 'no such body file');
});
