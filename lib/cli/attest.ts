/**
 * `omnigate attest keygen [--out FILE]`: a new Ed25519 key pair (the private key as PKCS#8 PEM, to
 * FILE with mode 0600, or to stdout; the public key and its default key id to stdout).
 * `omnigate attest verify --key PUB [--body FILE] ATTESTATION`: checks an X-Attestation value (a
 * batch's comma-separated list: each one). Exit 0 valid (the statement printed as JSON), 1 invalid
 * (the reason on stderr), 2 bad usage (no such file, not a public key).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { newKeyPair, publicKeyForms, publicKeyOf } from '../attest/keys.js';
import { verifyAttestation } from '../attest/verify.js';

export function registerAttestCommands(program: Command, print: (line: string) => void = (line) => process.stdout.write(`${line}\n`)): void {
  const attest = program.command('attest').description('Signed attestations of confirmed answers (config attest:)');
  attest
    .command('keygen')
    .description('print a new Ed25519 key pair: the private key (or write it to --out, mode 0600), the public key and its key id')
    .option('--out <file>', 'write the private key (PKCS#8 PEM) to this new file, readable by its owner only')
    .action((opts: { out?: string }, cmd: Command) => {
      const pair = newKeyPair();
      if (opts.out !== undefined) {
        try {
          writeFileSync(opts.out, pair.privatePem, { mode: 0o600, flag: 'wx' });
        } catch (err) {
          const code = (err as NodeJS.ErrnoException).code;
          return cmd.error(`omnigate attest keygen: cannot write ${opts.out}: ${code === 'EEXIST' ? 'the file exists (a key is never overwritten)' : (code ?? (err as Error).message)}`, { exitCode: 2, code: 'omnigate.attest.write' });
        }
      } else print(pair.privatePem.trimEnd());
      print(pair.publicPem.trimEnd());
      print(`publicKeyHex: ${pair.publicHex}`);
      print(`keyId: ${pair.keyId}`);
    });
  attest
    .command('verify <attestation>')
    .description('check an X-Attestation value against a public key (exit 0 valid, 1 invalid, 2 bad usage)')
    .requiredOption('--key <pub>', 'the public key: a PEM file, or its 32 bytes as 64 hex digits or base64')
    .option('--body <file>', 'the answer\'s body as received: its X-Json-Hash is recomputed and compared')
    .action((attestation: string, opts: { key: string; body?: string }, cmd: Command) => {
      let keyText = opts.key;
      if (!keyText.startsWith('-----BEGIN') && existsSync(keyText)) {
        try {
          keyText = readFileSync(keyText, 'utf8');
        } catch (err) {
          return cmd.error(`omnigate attest verify: cannot read ${opts.key}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { exitCode: 2, code: 'omnigate.attest.key' });
        }
      }
      const key = publicKeyOf(keyText);
      if (!key) return cmd.error(`omnigate attest verify: --key is not ${publicKeyForms} (nor a file holding one)`, { exitCode: 2, code: 'omnigate.attest.key' });
      let body: Buffer | undefined;
      if (opts.body !== undefined) {
        try {
          body = readFileSync(opts.body);
        } catch (err) {
          return cmd.error(`omnigate attest verify: cannot read ${opts.body}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, { exitCode: 2, code: 'omnigate.attest.body' });
        }
      }
      const list = attestation.split(',').map((a) => a.trim()).filter((a) => a !== '');
      if (list.length === 0) return cmd.error('omnigate attest verify: no attestation given', { exitCode: 2, code: 'omnigate.attest.usage' });
      for (const [i, one] of list.entries()) {
        const check = verifyAttestation(one, key, body !== undefined ? { answerBody: body } : {});
        if (!check.valid) {
          return cmd.error(`omnigate attest verify: invalid${list.length > 1 ? ` (attestation ${i + 1} of ${list.length})` : ''}: ${check.reason}`, { exitCode: 1, code: 'omnigate.attest.invalid' });
        }
        print(JSON.stringify(check.statement));
      }
    });
}
