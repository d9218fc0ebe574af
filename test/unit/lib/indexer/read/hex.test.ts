/**
 * EIP-55 addresses (lib/indexer/read/hex.ts) against viem's checksumAddress, an independent
 * implementation: random addresses, the EIP's own examples, and what is not an address.
 */
import { randomBytes } from 'node:crypto';
import test from 'ava';
import { checksumAddress, type Address } from 'viem';
import { eip55, lowerHex } from '../../../../../lib/indexer/read/hex.js';

test('eip55 spells 2,000 random addresses, from lower and upper case, as viem does', (t) => {
  for (let i = 0; i < 2000; i += 1) {
    const hex = randomBytes(20).toString('hex');
    const expected = checksumAddress(`0x${hex}` as Address);
    t.is(eip55(`0x${hex}`), expected);
    t.is(eip55(`0x${hex.toUpperCase()}`), expected);
  }
});

test('eip55 gives the examples of EIP-55 itself', (t) => {
  for (const a of [
    '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
    '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
    '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
    '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
    '0x52908400098527886E0F7030069857D2E4169EE7',
    '0x8617E340B3D01FA5F11F306F4090FD50E238070D',
    '0xde709f2102306220921060314715629080e2fb77',
    '0x27b1fdb04752bbc536007a920d24acb045561c26',
  ]) {
    t.is(eip55(a.toLowerCase()), a);
  }
});

test('eip55 returns what is not a 20-byte hex address as it is; lowerHex lower-cases', (t) => {
  for (const v of ['', '0x', '0x1234', `0x${'g'.repeat(40)}`, `0x${'ab'.repeat(21)}`, 'ab'.repeat(20)]) t.is(eip55(v), v);
  t.is(lowerHex('0xABCdef'), '0xabcdef');
});
