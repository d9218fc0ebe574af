/**
 * Decodes the `request` bytes of a BridgeRequested event into the bridge they describe.
 * FastBridge emits two layouts:
 * - FastBridge (v1): `abi.encode(BridgeTransaction)`. Every member is static, so the encoding is
 *   exactly twelve 32-byte words, one per member in order (originChainId, destChainId,
 *   originSender, destRecipient, originToken, destToken, originAmount, destAmount,
 *   originFeeAmount, sendChainGas, deadline, nonce), with no offsets: word i is member i.
 * - FastBridgeV2: `BridgeTransactionV2Lib.encodeV2`, tightly packed (abi.encodePacked), which no
 *   ABI decoder reads: uint16 version = 2, then fixed offsets up to byte 334, then zapData to the
 *   end, read as the contract's own `getBridgeTransactionV2` reads them.
 * Both are read at fixed offsets here. A general ABI decoder (viem's decodeAbiParameters, ox's
 * AbiParameters.decode) cost many times what shaping a page of rows costs; the tests check this
 * decoder against viem's, ethers' and the contract's.
 * v1 words are validated as abi.decode does (padding of uint32, address and bool words must be
 * zero, a bool is 0 or 1): anything else is not a v1 request.
 * The layouts cannot be confused: a v1 request starts with 28 zero bytes (the uint32 chain id's
 * padding), a v2 request with 0x0002.
 * Integers of 256 bits come out as exact decimal strings (the API's convention for raw amounts),
 * addresses EIP-55 checksummed like every address the API serves (hex.ts; viem caches the
 * checksums, so a page of bridges between a few tokens and relayers costs few keccaks), zapData as
 * lower-case hex.
 */
import { eip55 } from './hex.js';

/**
 * A decoded request's fields as this module builds them, each from its offset; their names, types
 * and descriptions are `DECODED_REQUEST_FIELDS` in fields.ts, whose `DecodedValues` type this value
 * is read as (a test holds the two to the same keys). Not typed from fields.ts here: fields.ts
 * calls this decoder, and the dependency goes one way.
 */
export type DecodedValues = Record<string, string | number | boolean | null>;

/** Hex digits of a v1 request: 12 words. */
const V1_HEX_LENGTH = 12 * 64;
/** Hex digits of the static part of a v2 request (bytes [0, 334)). */
const V2_STATIC_HEX_LENGTH = 334 * 2;

const HEX_BODY = /^[0-9a-fA-F]*$/;

/** Reads bytes [from, to) of a 0x-less hex string. */
const bytes = (hex: string, from: number, to: number) => hex.slice(from * 2, to * 2);
const uint = (hex: string, from: number, to: number) => BigInt(`0x${bytes(hex, from, to)}`).toString();
const addr = (hex: string, from: number) => eip55(`0x${bytes(hex, from, from + 20)}`);

function decodeV2(body: string): DecodedValues {
  return {
    version: 2,
    originChainId: Number.parseInt(bytes(body, 2, 6), 16),
    destChainId: Number.parseInt(bytes(body, 6, 10), 16),
    originSender: addr(body, 10),
    destRecipient: addr(body, 30),
    originToken: addr(body, 50),
    destToken: addr(body, 70),
    originAmount: uint(body, 90, 122),
    destAmount: uint(body, 122, 154),
    originFeeAmount: uint(body, 154, 186),
    deadline: uint(body, 186, 218),
    nonce: uint(body, 218, 250),
    sendChainGas: null,
    exclusivityRelayer: addr(body, 250),
    exclusivityEndTime: uint(body, 270, 302),
    zapNative: uint(body, 302, 334),
    zapData: `0x${body.slice(V2_STATIC_HEX_LENGTH).toLowerCase()}`,
  };
}

/** The 64 hex digits of v1 word i. */
const word = (body: string, i: number) => body.slice(i * 64, i * 64 + 64);
/** Word i as an unsigned integer of `bits` bits, or null when its padding is not zero. */
function v1Uint(body: string, i: number, bits: number): string | null {
  const w = word(body, i);
  const pad = 64 - bits / 4;
  for (let k = 0; k < pad; k += 1) if (w.charCodeAt(k) !== 48) return null;
  return w.slice(pad);
}

function decodeV1(body: string): DecodedValues | null {
  const origin = v1Uint(body, 0, 32);
  const dest = v1Uint(body, 1, 32);
  const addresses = [2, 3, 4, 5].map((i) => v1Uint(body, i, 160));
  const flag = v1Uint(body, 9, 8);
  if (origin === null || dest === null || addresses.includes(null) || (flag !== '00' && flag !== '01')) return null;
  const [originSender, destRecipient, originToken, destToken] = addresses.map((a) => eip55(`0x${a!}`)) as [string, string, string, string];
  const u256 = (i: number) => BigInt(`0x${word(body, i)}`).toString();
  return {
    version: 1,
    originChainId: Number.parseInt(origin, 16),
    destChainId: Number.parseInt(dest, 16),
    originSender, destRecipient, originToken, destToken,
    originAmount: u256(6),
    destAmount: u256(7),
    originFeeAmount: u256(8),
    deadline: u256(10),
    nonce: u256(11),
    sendChainGas: flag === '01',
    exclusivityRelayer: null,
    exclusivityEndTime: null,
    zapNative: null,
    zapData: null,
  };
}

/**
 * The bridge a request encodes, or null when the bytes are neither layout (a malformed or
 * unknown-version request is reported as null, never as an error: the rest of the item stays
 * useful). Accepts the hex with or without 0x, any case.
 */
export function decodeRequest(request: string): DecodedValues | null {
  const body = request.startsWith('0x') || request.startsWith('0X') ? request.slice(2) : request;
  if (body.length % 2 !== 0 || !HEX_BODY.test(body)) return null;
  if (body.length >= V2_STATIC_HEX_LENGTH && body.startsWith('0002')) return decodeV2(body);
  if (body.length === V1_HEX_LENGTH) return decodeV1(body);
  return null;
}
