/**
 * Which calls are confirmable, and where their pins sit: each call classified against the one
 * method table (methods.ts) and the config's declared pins, its parameters validated as a node
 * would (InvalidParamsError, -32602). Pure.
 */
import { InvalidParamsError, MethodNotFoundError } from '../errors.js';
import { neverConfirmable, preview, ruleOf, type CustomMethods, type MethodRule, type Pin, type PinAt } from './methods.js';
import { foldedKeysIn, goAliasOf } from './parse.js';
import type { RpcCall } from './types.js';

const movingTags = new Set(['latest', 'pending', 'safe', 'finalized']);
const hexQuantity = /^0x[0-9a-f]+$/i;
/** The keys of an EIP-1898 object and the pin keys of a filter (no other spelling: goAliasOf). */
const eip1898Keys = ['blockNumber', 'blockHash', 'requireCanonical'] as const;
const filterPinKeys = ['fromBlock', 'toBlock', 'blockHash'] as const;
const hash32 = /^0x[0-9a-f]{64}$/i;

export interface Classification {
  confirmable: boolean;
  /** Why, in a few words (logged; useful when a user wonders why N was 1). */
  reason: string;
}

/**
 * Methods omnigate refuses: a subscription's notifications would come on the WebSocket connection
 * omnigate shares between every request to a ws upstream, where no client hears them, for as long
 * as the connection lasts (any client could open such streams at will, at the provider's price);
 * over HTTP a node refuses them anyway.
 */
export const refusedMethods: ReadonlySet<string> = new Set(['eth_subscribe', 'eth_unsubscribe']);

/**
 * Classifies one call and validates the parameters omnigate reads. Throws InvalidParamsError
 * (-32602) for a parameter list that no node would accept, so a bad call never reaches an upstream.
 * @param custom methods the config makes confirmable, each with its declared pin.
 */
export function classifyCall(call: RpcCall, custom: CustomMethods): Classification {
  if (refusedMethods.has(call.method)) {
    throw new MethodNotFoundError(`${call.method} is not served: subscriptions need a WebSocket connection of the client's own (omnigate answers over HTTP, its upstream connections are shared)`, { id: call.id });
  }
  if (neverConfirmable.has(call.method)) return { confirmable: false, reason: `${call.method} is never confirmable` };
  if (call.alias !== undefined) return { confirmable: false, reason: `the request has a key ${JSON.stringify(call.alias)} that Go nodes read as jsonrpc, id, method or params: they may answer another call` };
  const rule = ruleOf(call.method);
  const declared = Object.hasOwn(Object.prototype, call.method) ? undefined : custom.get(call.method);
  if (rule && (rule.confirmable || declared)) return unlessFolded(call, classifyPinned(call, rule));
  if (rule) return { confirmable: false, reason: `${call.method} is not confirmable: ${rule.why}` };
  if (declared) {
    if (declared.kind === 'none') return unlessFolded(call, { confirmable: true, reason: `${call.method} is configured as confirmable whatever the block` });
    return unlessFolded(call, classifyPinned(call, { pin: declared, confirmable: true, why: 'configured' }));
  }
  return { confirmable: false, reason: `${call.method} is not in the confirmable list` };
}

/**
 * A confirmable call stays so unless an object of its params holds two keys that differ only in
 * letter case (parse.ts foldedKeysIn): Go nodes read the last of them, so two requests omnigate
 * reads as one question (one merged run, one cache entry, one attested request) may be two
 * questions to the nodes. Answered by one upstream, as a request object with such a key is.
 */
function unlessFolded(call: RpcCall, c: Classification): Classification {
  if (!c.confirmable) return c;
  const pair = foldedKeysIn(call.params);
  if (pair === undefined) return c;
  return { confirmable: false, reason: `the params hold the keys ${JSON.stringify(pair[0])} and ${JSON.stringify(pair[1])}, which differ only in letter case: Go nodes read the last of them, so the order they are written in decides the question` };
}

/**
 * Methods whose answer is fixed for a chain (every honest node of the chain gives the same one),
 * so they do not make a batch unconfirmable. ethers v6 adds `eth_chainId` to its batches; without
 * this, every batch of pinned reads it sends would fall to one upstream. On their own they stay
 * unconfirmable (one upstream), as a node reads a missing block parameter.
 */
export const batchNeutral: ReadonlySet<string> = new Set(['eth_chainId', 'net_version']);

/**
 * A batch is confirmable only if every member is, `batchNeutral` members aside (they are then
 * checked by the N upstreams with the rest); a batch of neutral members only is not.
 */
export function classifyCalls(calls: readonly RpcCall[], custom: CustomMethods): Classification {
  if (calls.length === 1) return classifyCall(calls[0]!, custom);
  // Every member is checked (and may throw) before any verdict, whatever its position.
  const verdicts = calls.map((call) => inBatch(call, () => classifyCall(call, custom)));
  let pinnedMembers = 0;
  for (const [i, c] of verdicts.entries()) {
    const call = calls[i]!;
    if (c.confirmable) pinnedMembers += 1;
    else if (!batchNeutral.has(call.method) || call.alias !== undefined) return { confirmable: false, reason: `batch member ${JSON.stringify(call.id)}: ${c.reason}` };
  }
  return pinnedMembers > 0
    ? { confirmable: true, reason: 'every batch member is confirmable or fixed for the chain' }
    : { confirmable: false, reason: 'the batch has only chain constants (eth_chainId, net_version)' };
}

/** Runs a batch member's check; its error names the member and echoes no id (the batch has none). */
function inBatch(call: RpcCall, fn: () => Classification): Classification {
  try {
    return fn();
  } catch (err) {
    throw new InvalidParamsError(`batch id ${JSON.stringify(call.id)}: ${(err as Error).message}`, { id: null });
  }
}

/** The -32602 of a call whose parameters no node would accept (built only when thrown: no closure per call). */
function badParams(call: RpcCall, message: string): Error {
  return new InvalidParamsError(`Invalid params for ${call.method}: ${message}`, { id: call.id });
}

/** `params[i]`, the name of a parameter in reasons and errors, made once for the first positions. */
const paramNames = Array.from({ length: 8 }, (_, i) => `params[${i}]`);
const paramName = (i: number): string => paramNames[i] ?? `params[${i}]`;

function classifyPinned(call: RpcCall, rule: MethodRule): Classification {
  const { params, method } = call;
  if (rule.max !== undefined && params.length > rule.max) throw badParams(call, `takes at most ${rule.max} parameter${rule.max > 1 ? 's' : ''}, got ${params.length}`);
  const required = rule.required;
  if (required !== undefined) {
    for (let index = 0; index < required.length; index += 1) {
      if (params[index] === undefined || params[index] === null) throw badParams(call, `params[${index}] (${required[index]}) is required`);
    }
  }
  if (rule.flagAt !== undefined && typeof params[rule.flagAt] !== 'boolean') {
    throw badParams(call, `params[${rule.flagAt}] (full transactions flag) must be true or false`);
  }
  const pin = rule.pin;
  switch (pin.kind) {
    case 'filter':
      return classifyFilter(params[0], call);
    case 'block':
      return classifyBlock(params[pin.at], paramName(pin.at), pin.hash, call);
    case 'blockHash':
    case 'txHash': {
      const value = params[pin.at];
      const what = pin.kind === 'blockHash' ? 'block hash' : 'transaction hash';
      if (typeof value !== 'string' || !hash32.test(value)) throw badParams(call, `params[${pin.at}] (${what}) must be a 32-byte hex hash, got ${preview(value)}`);
      return { confirmable: true, reason: `params[${pin.at}] pins ${what} ${value}` };
    }
    case 'none':
      return { confirmable: true, reason: `${method} is fixed whatever the block` };
  }
}

/** (`call`: the call whose parameter this is, named by the error when the value is refused) */
function classifyBlock(
  value: unknown,
  where: string,
  allowHash: boolean,
  call: RpcCall,
): Classification {
  if (value === undefined || value === null) return { confirmable: false, reason: `${where} is missing, which means latest` };
  if (typeof value === 'string') {
    const tag = value.toLowerCase();
    // `safe`/`finalized` come here already resolved to a number when the heads are tracked, `earliest` always (resolvableTags).
    if (movingTags.has(tag)) return { confirmable: false, reason: `${where} is "${value}", which moves with the chain head` };
    // `earliest` is "the lowest numbered block the client has available" (execution-apis): a node
    // that expired its history (geth's --history.chain postmerge, rolling expiry) answers from its
    // cutoff, so two such nodes agree on what a full node contradicts (logs "since earliest" that
    // lack every older one), and the cutoff moves. The classify stage sends 0x0 instead
    // (resolvableTags), and the call is then pinned to the genesis block.
    if (tag === 'earliest') return { confirmable: false, reason: `${where} is "${value}", the lowest block the answering node has (a node that expired its history answers from its cutoff), until resolved to 0x0` };
    if (allowHash && hash32.test(value)) return { confirmable: true, reason: `${where} pins block hash ${value}` };
    if (hexQuantity.test(value)) return { confirmable: true, reason: `${where} pins block ${value}` };
  } else if (allowHash && typeof value === 'object' && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    const alias = goAliasOf(obj, eip1898Keys);
    if (alias !== undefined) throw badParams(call, `${where} has a key ${JSON.stringify(alias)} that Go nodes read as one of ${eip1898Keys.join(', ')}: spell it exactly`);
    if (typeof obj.blockHash === 'string' && hash32.test(obj.blockHash) && obj.blockNumber === undefined) {
      return { confirmable: true, reason: `${where} pins block hash ${obj.blockHash}` };
    }
    if (obj.blockHash === undefined && typeof obj.blockNumber === 'string') {
      return classifyBlock(obj.blockNumber, `${where}.blockNumber`, false, call);
    }
  }
  const shapes = allowHash ? 'a hex block number, a block tag, a block hash or an EIP-1898 object {"blockHash"} / {"blockNumber"}' : 'a hex block number or a block tag';
  throw badParams(call, `${where} must be ${shapes}, got ${preview(value)}`);
}

function classifyFilter(filter: unknown, call: RpcCall): Classification {
  if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) throw badParams(call, 'params[0] must be a filter object');
  const f = filter as Record<string, unknown>;
  const alias = goAliasOf(f, filterPinKeys);
  if (alias !== undefined) throw badParams(call, `the filter has a key ${JSON.stringify(alias)} that Go nodes read as one of ${filterPinKeys.join(', ')}: spell it exactly`);
  if (f.blockHash !== undefined) {
    if (f.fromBlock !== undefined || f.toBlock !== undefined) throw badParams(call, 'a filter with blockHash cannot also have fromBlock or toBlock (EIP-234)');
    if (typeof f.blockHash !== 'string' || !hash32.test(f.blockHash)) throw badParams(call, `blockHash must be a 32-byte hex hash, got ${preview(f.blockHash)}`);
    return { confirmable: true, reason: `filter pins block hash ${f.blockHash}` };
  }
  const from = classifyBlock(f.fromBlock, 'fromBlock', false, call);
  const to = classifyBlock(f.toBlock, 'toBlock', false, call);
  if (!from.confirmable) return from;
  if (!to.confirmable) return to;
  return { confirmable: true, reason: 'filter pins fromBlock and toBlock' };
}

/**
 * Where a call's pin is (for heads and eligibility): the block number it names (`earliest`, not
 * confirmable, is 0 here: every node has its own earliest block),
 * a tag, a block hash, a transaction hash, or none (a method without a pin, or one not in the
 * table nor declared). eth_getLogs: its blockHash, else its toBlock (the highest block it needs).
 * Never throws: a malformed pin is `none` (classifyCall refuses the call anyway).
 */
export function pinOf(call: RpcCall, custom: CustomMethods = new Map()): Pin {
  const at = pinAtOf(call.method, custom);
  if (!at) return { kind: 'none' };
  const params = call.params;
  switch (at.kind) {
    case 'none':
      return { kind: 'none' };
    case 'blockHash':
    case 'txHash': {
      const value = params[at.at];
      return typeof value === 'string' && hash32.test(value) ? { kind: at.kind, hash: value } : { kind: 'none' };
    }
    case 'block':
      return blockPin(params[at.at], at.hash);
    case 'filter': {
      const f = params[0];
      if (typeof f !== 'object' || f === null || Array.isArray(f)) return { kind: 'none' };
      const filter = f as Record<string, unknown>;
      if (typeof filter.blockHash === 'string') return hash32.test(filter.blockHash) ? { kind: 'blockHash', hash: filter.blockHash } : { kind: 'none' };
      return blockPin(filter.toBlock, false);
    }
  }
}

/** Where a method's pin sits: the table's, else the one the config declares; undefined for neither. */
export function pinAtOf(method: string, custom: CustomMethods = new Map()): PinAt | undefined {
  return ruleOf(method)?.pin ?? (Object.hasOwn(Object.prototype, method) ? undefined : custom.get(method));
}

function blockPin(value: unknown, allowHash: boolean): Pin {
  if (value === undefined || value === null) return { kind: 'tag', tag: 'latest' };
  if (typeof value === 'string') {
    const tag = value.toLowerCase();
    if (movingTags.has(tag)) return { kind: 'tag', tag };
    if (tag === 'earliest') return { kind: 'number', block: 0n };
    if (allowHash && hash32.test(value)) return { kind: 'blockHash', hash: value };
    if (hexQuantity.test(value)) return { kind: 'number', block: BigInt(value) };
    return { kind: 'none' };
  }
  if (allowHash && typeof value === 'object' && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    if (typeof obj.blockHash === 'string') return hash32.test(obj.blockHash) ? { kind: 'blockHash', hash: obj.blockHash } : { kind: 'none' };
    return blockPin(obj.blockNumber, false);
  }
  return { kind: 'none' };
}

