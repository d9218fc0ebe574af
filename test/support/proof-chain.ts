/**
 * Real blocks for the proof library's tests: one anvil node per hardfork, each given the same
 * story in two blocks with several transactions each (a legacy transaction, an EIP-2930 and an
 * EIP-1559 one where the fork has them, an EIP-7702 one on Prague, a contract deployed, logs
 * emitted by calls from two senders, a transfer), then an empty block. Every transaction is signed here (ethers), so the
 * types are exactly those asked for.
 *
 * The contract (`emitter`) is hand-assembled: any call emits
 * `LOG2(data = calldata, topic0 = EMITTER_TOPIC, topic1 = caller)` and stores the first calldata
 * word in slot 1.
 */
import { HDNodeWallet, Transaction, getCreateAddress, id as keccakText, toBeHex, zeroPadValue } from 'ethers';
import { anvilWallet, startAnvils, stopAllAnvils, type AnvilNode, type RpcAnswer } from './anvil.js';
import { startTamperProxy, type Tamper, type TamperProxy } from './tamper-proxy.js';

export type Fork = 'berlin' | 'london' | 'shanghai' | 'cancun' | 'prague';

export const EMITTER_TOPIC = keccakText('Emitted(address,bytes)');

/** The emitter's init code: returns the runtime described above. */
export const emitterInitCode = (() => {
  const runtime = `0x36600060003733` + `7f${EMITTER_TOPIC.slice(2)}` + `366000a2` + `600035600155` + `00`;
  const len = (runtime.length - 2) / 2;
  const hex1 = (n: number) => n.toString(16).padStart(2, '0');
  // PUSH1 len DUP1 PUSH1 11 PUSH1 0 CODECOPY PUSH1 0 RETURN (11 bytes), then the runtime
  return { initCode: `0x60${hex1(len)}80600b6000396000f3${runtime.slice(2)}`, runtime };
})();

export interface ProofChain {
  fork: Fork;
  node: AnvilNode;
  chainId: number;
  emitter: string;
  senders: string[];
  recipient: string;
  /** Block 1: deployment, legacy transfer, typed transfers; block 2: calls to the emitter (logs); block 3: empty. */
  blocks: { deploy: number; logs: number; empty: number };
  /** The word the last call stored in slot 1. */
  storedWord: string;
}

const GWEI = 1_000_000_000n;

async function sign(wallet: HDNodeWallet, fields: Record<string, unknown>): Promise<string> {
  return wallet.signTransaction(Transaction.from(fields as never));
}

/**
 * Receipts as go-ethereum, reth, erigon and nethermind serve them: `blobGasPrice` only on a blob
 * transaction's. Anvil writes its block's blob base fee into every receipt, even before Cancun: a
 * value no root holds, so a proof vouches for no such receipt (lib/prove: agreement instead).
 */
const gethReceipts: Tamper = (call, result) => {
  const strip = (r: unknown) => {
    if (r !== null && typeof r === 'object' && (r as { type?: unknown }).type !== '0x3') delete (r as { blobGasPrice?: unknown }).blobGasPrice;
    return r;
  };
  if (call.method === 'eth_getTransactionReceipt') return strip(result);
  if (call.method === 'eth_getBlockReceipts' && Array.isArray(result)) return result.map(strip);
  return undefined;
};

const fronts = new Set<TamperProxy>();

/** The node behind a front that serves receipts as gethReceipts (its url and calls go through the front). */
async function behindFront(node: AnvilNode): Promise<AnvilNode> {
  const front = await startTamperProxy(node.url, gethReceipts);
  fronts.add(front);
  let id = 0;
  const request = async (method: string, params: unknown[] = []): Promise<RpcAnswer> => {
    const res = await fetch(front.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }) });
    return (await res.json()) as RpcAnswer;
  };
  return {
    url: front.url,
    port: node.port,
    pid: node.pid,
    request,
    async rpc<T>(method: string, params: unknown[] = []) {
      const answer = await request(method, params);
      if (answer.error) throw new Error(`${method}: ${answer.error.message}`);
      return answer.result as T;
    },
    get exited() {
      return node.exited;
    },
    async stop() {
      fronts.delete(front);
      await front.close();
      await node.stop();
    },
  };
}

/** Stops every proof chain's front (receipts: 'geth') and every anvil (for `test.after.always`). */
export async function stopProofChains(): Promise<void> {
  await Promise.all([...fronts].map((f) => f.close()));
  fronts.clear();
  await stopAllAnvils();
}

/**
 * Starts an anvil with `--hardfork fork` and builds the three blocks (12 s apart after the
 * genesis `timestamp`: startAnvils' default when absent). Stop it with stopAllAnvils (with
 * `receipts: 'geth'`, stopProofChains). `receipts`: as anvil writes them (default), or as
 * gethReceipts (through a front: `node.url` is the front's).
 */
export async function proofChain(fork: Fork, options: { chainId?: number; timestamp?: number; receipts?: 'anvil' | 'geth' } = {}): Promise<ProofChain> {
  const chainId = options.chainId ?? 31337;
  const cluster = await startAnvils(1, { chainId, args: ['--hardfork', fork], ...(options.timestamp !== undefined && { timestamp: options.timestamp }) });
  const node = cluster.nodes[0]!;
  const [a, b] = [anvilWallet(0), anvilWallet(1)];
  const recipient = '0x00000000000000000000000000000000000b0b00';
  const typed = fork !== 'berlin';
  const fee = typed ? { maxFeePerGas: 20n * GWEI, maxPriorityFeePerGas: GWEI } : {};
  const emitter = getCreateAddress({ from: a.address, nonce: 0 });
  const block1 = [
    await sign(a, { type: typed ? 2 : 0, chainId, nonce: 0, data: emitterInitCode.initCode, gasLimit: 200_000n, ...(typed ? fee : { gasPrice: 20n * GWEI }) }),
    await sign(a, { type: 0, chainId, nonce: 1, to: recipient, value: 1000n, gasLimit: 21_000n, gasPrice: 20n * GWEI }),
    await sign(b, { type: 1, chainId, nonce: 0, to: recipient, value: 2000n, gasLimit: 30_000n, gasPrice: 20n * GWEI, accessList: [{ address: recipient, storageKeys: [zeroPadValue('0x01', 32)] }] }),
  ];
  if (typed) block1.push(await sign(b, { type: 2, chainId, nonce: 1, to: recipient, value: 3000n, gasLimit: 21_000n, ...fee }));
  if (fork === 'prague') {
    // EIP-7702: account 3 authorizes the code of an address without code; account 2 sends it.
    const [c, d] = [anvilWallet(2), anvilWallet(3)];
    const authorization = d.authorizeSync({ address: recipient, nonce: 0, chainId });
    block1.push(await sign(c, { type: 4, chainId, nonce: 0, to: d.address, value: 0n, gasLimit: 60_000n, authorizationList: [authorization], ...fee }));
  }
  const word = zeroPadValue(toBeHex(0xc0ffeen), 32);
  const call = (w: HDNodeWallet, nonce: number, data: string, type: number) =>
    sign(w, { type, chainId, nonce, to: emitter, data, gasLimit: 100_000n, ...(type === 2 ? fee : { gasPrice: 20n * GWEI }) });
  const block2 = [
    await call(a, 2, `${zeroPadValue('0x01', 32)}`, typed ? 2 : 0),
    await call(b, typed ? 2 : 1, `${zeroPadValue('0x02', 32)}abcd`, 0),
    await sign(a, { type: 0, chainId, nonce: 3, to: recipient, value: 1n, gasLimit: 21_000n, gasPrice: 20n * GWEI }),
    await call(a, 4, word, typed ? 1 : 0),
  ];
  const t0 = cluster.genesisTimestamp;
  const deploy = (await cluster.mineSame(block1, t0 + 12)).number;
  const logs = (await cluster.mineSame(block2, t0 + 24)).number;
  const empty = (await cluster.mineSame([], t0 + 36)).number;
  const served = options.receipts === 'geth' ? await behindFront(node) : node;
  return { fork, node: served, chainId, emitter: emitter.toLowerCase(), senders: [a.address.toLowerCase(), b.address.toLowerCase()], recipient, blocks: { deploy, logs, empty }, storedWord: word };
}
