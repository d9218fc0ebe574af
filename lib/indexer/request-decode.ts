/**
 * Decodes the `request` bytes of a BridgeRequested event into the bridge they describe.
 * FastBridge emits two layouts:
 * - FastBridge (v1): `abi.encode(BridgeTransaction)`, twelve static 32-byte words
 *   (originChainId, destChainId, originSender, destRecipient, originToken, destToken,
 *   originAmount, destAmount, originFeeAmount, sendChainGas, deadline, nonce); decoded with
 *   viem's ABI decoder.
 * - FastBridgeV2: `BridgeTransactionV2Lib.encodeV2`, tightly packed (abi.encodePacked), which no
 *   ABI decoder reads: uint16 version = 2, then fixed offsets up to byte 334, then zapData to the
 *   end. Read at those offsets, as the contract's own `getBridgeTransactionV2` does.
 * The layouts cannot be confused: a v1 request starts with 28 zero bytes (the uint32 chain id's
 * padding), a v2 request with 0x0002.
 * Integers of 256 bits come out as exact decimal strings (the API's convention for raw amounts),
 * addresses in their EIP-55 checksum form (as Ponder stores them).
 */
import { decodeAbiParameters, getAddress, type Hex } from 'viem';

export interface DecodedRequest {
  /** 1: FastBridge BridgeTransaction (abi.encode); 2: FastBridgeV2 BridgeTransactionV2 (packed). */
  version: 1 | 2;
  originChainId: number;
  destChainId: number;
  originSender: string;
  destRecipient: string;
  originToken: string;
  destToken: string;
  originAmount: string;
  destAmount: string;
  originFeeAmount: string;
  /** Unix seconds after which the request may be refunded (exact decimal string, uint256). */
  deadline: string;
  nonce: string;
  /** v1 only (null in v2, which dropped the flag). */
  sendChainGas: boolean | null;
  /** v2 only: the relayer with the exclusive right to relay until exclusivityEndTime (zero address: none). */
  exclusivityRelayer: string | null;
  exclusivityEndTime: string | null;
  /** v2 only: native value and call data forwarded to the recipient ("zap"). */
  zapNative: string | null;
  zapData: string | null;
}

const V1_COMPONENTS = [
  { name: 'originChainId', type: 'uint32' },
  { name: 'destChainId', type: 'uint32' },
  { name: 'originSender', type: 'address' },
  { name: 'destRecipient', type: 'address' },
  { name: 'originToken', type: 'address' },
  { name: 'destToken', type: 'address' },
  { name: 'originAmount', type: 'uint256' },
  { name: 'destAmount', type: 'uint256' },
  { name: 'originFeeAmount', type: 'uint256' },
  { name: 'sendChainGas', type: 'bool' },
  { name: 'deadline', type: 'uint256' },
  { name: 'nonce', type: 'uint256' },
] as const;
const V1_ABI = [{ type: 'tuple', components: V1_COMPONENTS }] as const;
/** Hex digits of a v1 request: 12 words. */
const V1_HEX_LENGTH = 12 * 64;
/** Hex digits of the static part of a v2 request (bytes [0, 334)). */
const V2_STATIC_HEX_LENGTH = 334 * 2;

const HEX_BODY = /^[0-9a-fA-F]*$/;

/** Reads bytes [from, to) of a 0x-less hex string. */
const bytes = (hex: string, from: number, to: number) => hex.slice(from * 2, to * 2);
const uint = (hex: string, from: number, to: number) => BigInt(`0x${bytes(hex, from, to)}`).toString();
const addr = (hex: string, from: number) => getAddress(`0x${bytes(hex, from, from + 20)}`);

function decodeV2(body: string): DecodedRequest {
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

function decodeV1(hex: Hex): DecodedRequest {
  const [tx] = decodeAbiParameters(V1_ABI, hex);
  return {
    version: 1,
    originChainId: tx.originChainId,
    destChainId: tx.destChainId,
    originSender: tx.originSender,
    destRecipient: tx.destRecipient,
    originToken: tx.originToken,
    destToken: tx.destToken,
    originAmount: tx.originAmount.toString(),
    destAmount: tx.destAmount.toString(),
    originFeeAmount: tx.originFeeAmount.toString(),
    deadline: tx.deadline.toString(),
    nonce: tx.nonce.toString(),
    sendChainGas: tx.sendChainGas,
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
export function decodeRequest(request: string): DecodedRequest | null {
  const body = request.startsWith('0x') || request.startsWith('0X') ? request.slice(2) : request;
  if (body.length % 2 !== 0 || !HEX_BODY.test(body)) return null;
  if (body.length >= V2_STATIC_HEX_LENGTH && body.startsWith('0002')) return decodeV2(body);
  if (body.length === V1_HEX_LENGTH && /^0{56}/.test(body)) {
    try {
      return decodeV1(`0x${body}`);
    } catch {
      return null; // e.g. a bool word other than 0 or 1, an address word with high bits set
    }
  }
  return null;
}
