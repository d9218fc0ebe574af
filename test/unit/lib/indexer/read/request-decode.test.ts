/**
 * decodeRequest on bytes encoded by viem (no chain needed: the integration test holds it to the
 * contract's own decoder): the v1 ABI words and the v2 packed layout, exact decimals and EIP-55
 * addresses; null for bytes of neither layout, never an error.
 */
import test from 'ava';
import { encodeAbiParameters, encodePacked, getAddress, type Address, type Hex } from 'viem';
import { decodeRequest } from '../../../../../lib/indexer/read/request-decode.js';

const sender = getAddress('0xa11ce00000000000000000000000000000000001');
const recipient = getAddress('0xb0b0000000000000000000000000000000000002');
const usdcArb = getAddress('0xaf88d065e77c8cc2239327c5edb3a432268e5831');
const usdcBase = getAddress('0x833589fcd6edb6e08f4c7c32d4f71b54bda02913');
const relayer = getAddress('0x6a4d000000000000000000000000000000000003');
const MAX256 = 2n ** 256n - 1n;

const v1Types = [
  { type: 'uint32' }, { type: 'uint32' }, { type: 'address' }, { type: 'address' }, { type: 'address' }, { type: 'address' },
  { type: 'uint256' }, { type: 'uint256' }, { type: 'uint256' }, { type: 'bool' }, { type: 'uint256' }, { type: 'uint256' },
] as const;

function v1(sendChainGas: boolean, amount = 1_000_000n): Hex {
  return encodeAbiParameters(v1Types, [42161, 8453, sender, recipient, usdcArb, usdcBase, amount, 999_000n, 100n, sendChainGas, 1_760_003_600n, 7n]);
}

function v2(zapData: Hex, version = 2, exclusivity: Address = relayer): Hex {
  return encodePacked(
    ['uint16', 'uint32', 'uint32', 'address', 'address', 'address', 'address', 'uint256', 'uint256', 'uint256', 'uint256', 'uint256', 'address', 'uint256', 'uint256', 'bytes'],
    [version, 42161, 8453, sender, recipient, usdcArb, usdcBase, MAX256, 999_000n, 100n, 1_760_003_600n, 7n, exclusivity, 1_760_000_060n, 5n, zapData],
  );
}

test('should decode a v1 request, every member from its word', (t) => {
  t.deepEqual(decodeRequest(v1(true)), {
    version: 1, originChainId: 42161, destChainId: 8453, originSender: sender, destRecipient: recipient, originToken: usdcArb, destToken: usdcBase,
    originAmount: '1000000', destAmount: '999000', originFeeAmount: '100', deadline: '1760003600', nonce: '7', sendChainGas: true,
    exclusivityRelayer: null, exclusivityEndTime: null, zapNative: null, zapData: null,
  });
  t.is(decodeRequest(v1(false))!.sendChainGas, false);
  t.is(decodeRequest(v1(false, MAX256))!.originAmount, MAX256.toString(), '256-bit amounts exact');
});

test('should decode a v2 request at its packed offsets, zapData to the end in lower case', (t) => {
  t.deepEqual(decodeRequest(v2('0xDEADbeef')), {
    version: 2, originChainId: 42161, destChainId: 8453, originSender: sender, destRecipient: recipient, originToken: usdcArb, destToken: usdcBase,
    originAmount: MAX256.toString(), destAmount: '999000', originFeeAmount: '100', deadline: '1760003600', nonce: '7', sendChainGas: null,
    exclusivityRelayer: relayer, exclusivityEndTime: '1760000060', zapNative: '5', zapData: '0xdeadbeef',
  });
  t.is(decodeRequest(v2('0x'))!.zapData, '0x');
});

test('should accept the hex without 0x and in upper case', (t) => {
  const hex = v2('0x01');
  t.deepEqual(decodeRequest(hex.slice(2).toUpperCase()), decodeRequest(hex));
  t.deepEqual(decodeRequest(`0X${v1(true).slice(2)}`), decodeRequest(v1(true)));
});

test('should give null for bytes of neither layout', (t) => {
  const words = v1(true).slice(2);
  const setWord = (i: number, w: string) => `0x${words.slice(0, i * 64)}${w}${words.slice(i * 64 + 64)}`;
  const cases: [string, string][] = [
    ['empty', '0x'],
    ['an odd number of digits', `${v1(true)}0`],
    ['a non-hex digit', `0x${'g'.repeat(768)}`],
    ['a v1 word short', v1(true).slice(0, -64)],
    ['a chain id with padding set', setWord(0, `1${'0'.repeat(55)}0000a4b1`)],
    ['an address with padding set', setWord(2, `01${'0'.repeat(22)}${sender.slice(2)}`)],
    ['a bool of 2', setWord(9, `${'0'.repeat(63)}2`)],
    ['another version', v2('0x', 3)],
    ['a v2 request cut short', v2('0x').slice(0, 2 + 333 * 2)],
  ];
  for (const [what, hex] of cases) t.is(decodeRequest(hex), null, what);
});
