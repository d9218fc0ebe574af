/**
 * Real local Ethereum nodes for integration tests: N anvil processes (the binary shipped in the
 * `@foundry-rs/anvil-linux-amd64` npm package) with the same genesis, so that they answer every pinned
 * query identically. Each listens on its own free port on 127.0.0.1, mines only on demand
 * (`--no-mining`, no `--block-time`) and is silent.
 *
 * Blocks stay identical across nodes because they are built the same way on each node:
 * `mineSame` sends the same signed raw transactions to every node, then mines one block with
 * the same timestamp (`evm_setNextBlockTimestamp` + `evm_mine`), and checks that every node
 * ends up with the same block hash. `seedChain` uses it to deploy a tiny contract (storage slot
 * 0 = 42, one log) and make a transfer.
 *
 * `stop()` kills a cluster and waits until every process has exited; `stopAllAnvils()` stops
 * every cluster this process started (call it in `test.after.always`), and a process 'exit'
 * hook SIGKILLs whatever is still running. Neither runs when the worker is killed (ava's timeout
 * ends a worker with a signal: no 'exit' event, no `after.always`), so each anvil also runs in its
 * own process group with a watchdog, as the embedded PostgreSQL does (lib/indexer/postgres/process.ts):
 * a tiny `/bin/sh` whose standard input is a pipe from this worker. The kernel closes the pipe
 * when the worker dies, however it dies; `read` returns and the watchdog SIGKILLs the anvil's
 * group, if /proc still shows that pid listening on its port (a recycled pid is never hit). The
 * watchdog is killed as soon as its anvil exits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { HDNodeWallet, Transaction, getCreateAddress, id as keccakText, toBeHex, zeroPadValue } from 'ethers';
import { send } from './gateway.js';
import { root as projectRoot } from './paths.js';

/** anvil's default mnemonic: the well-known dev accounts (0xf39F…, 0x7099…, …). */
export const anvilMnemonic = 'test test test test test test test test test test test junk';

export interface AnvilOptions {
  /** Chain id of every node (default 31337). */
  chainId?: number;
  /** Genesis timestamp, seconds (default 1_700_000_000). */
  timestamp?: number;
  mnemonic?: string;
  /** More anvil arguments, the same for every node. */
  args?: string[];
  /** How long to wait for a node to answer eth_chainId, ms (default 60 s: generous, for a loaded machine). */
  readyTimeoutMs?: number;
}

export interface RpcAnswer {
  jsonrpc: '2.0';
  id: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

export interface AnvilNode {
  /** e.g. `http://127.0.0.1:40123/` */
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** One JSON-RPC call straight to this node; the raw answer (result or error). */
  request(method: string, params?: unknown[]): Promise<RpcAnswer>;
  /** One JSON-RPC call straight to this node; its result, or throws on a JSON-RPC error. */
  rpc<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  /** Whether the process has exited. */
  readonly exited: boolean;
  stop(): Promise<void>;
}

export interface AnvilCluster {
  readonly nodes: readonly AnvilNode[];
  readonly urls: string[];
  readonly chainId: number;
  readonly genesisTimestamp: number;
  /**
   * Sends `rawTxs` (in order) to each of `nodes` (default: all), then mines one block there with
   * `timestamp`. Throws if the nodes end up with different block hashes. Returns the block.
   */
  mineSame(rawTxs: readonly string[], timestamp: number, nodes?: readonly AnvilNode[]): Promise<{ number: number; hash: string }>;
  stop(): Promise<void>;
}


/** The anvil executable: the platform package's binary, else the npm wrapper in node_modules/.bin. */
export function anvilBinary(): { command: string; prefix: string[] } {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  const os = process.platform === 'win32' ? 'win32' : process.platform;
  const exe = process.platform === 'win32' ? 'anvil.exe' : 'anvil';
  const direct = path.join(projectRoot, 'node_modules', '@foundry-rs', `anvil-${os}-${arch}`, 'bin', exe);
  if (existsSync(direct)) return { command: direct, prefix: [] };
  const wrapper = path.join(projectRoot, 'node_modules', '@foundry-rs', 'anvil', 'bin.mjs');
  if (existsSync(wrapper)) return { command: process.execPath, prefix: [wrapper] };
  throw new Error(`anvil not found: neither ${direct} nor ${wrapper} exists (is @foundry-rs/anvil-linux-amd64 installed? only linux x64 binaries are in the registry this project uses)`);
}

const running = new Set<ChildProcess>();
const clusters = new Set<AnvilCluster>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}

/** Kills the anvil's group once the worker is gone (read returns at the pipe's end), if the pid is still that anvil. */
// (dash's kill takes no `--`: a negative pid after the signal is the group.)
const WATCHDOG = 'read -r _; tr "\\0" " " < "/proc/$1/cmdline" 2>/dev/null | grep -q -- "--port $2" && kill -KILL "-$1"';

function watch(child: ChildProcess, port: number): void {
  const watchdog = spawn('/bin/sh', ['-c', WATCHDOG, 'omnigate-anvil-watchdog', String(child.pid), String(port)], {
    detached: true, stdio: ['pipe', 'ignore', 'ignore'],
  });
  watchdog.once('error', () => {
    // no /bin/sh: the exit hook and stopAllAnvils remain
  });
  // Neither keeps the worker alive; the pipe stays open as long as the worker lives.
  watchdog.unref();
  (watchdog.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  child.once('exit', () => watchdog.kill('SIGKILL'));
}

/** A port that was free a moment ago (anvil is then told to use it; a collision is retried). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function makeRequest(url: string) {
  let nextId = 1;
  return async (method: string, params: unknown[] = []): Promise<RpcAnswer> => {
    const reply = await send(url.replace(/\/$/, ''), 'POST', '/', JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }), {
      'content-type': 'application/json',
    });
    if (reply.status !== 200 || reply.body === undefined) {
      throw new Error(`anvil ${url} ${method}: HTTP ${reply.status} ${reply.text.slice(0, 200)}`);
    }
    return reply.body as RpcAnswer;
  };
}

function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.off('exit', onExit);
      resolve(false);
    }, timeoutMs);
    const onExit = () => {
      clearTimeout(timer);
      resolve(true);
    };
    child.once('exit', onExit);
  });
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    if (!(await waitForExit(child, 3_000))) {
      child.kill('SIGKILL');
      await waitForExit(child, 3_000);
    }
  }
  running.delete(child);
}

/** Starts one anvil on a free port; retries with another port when the chosen one was taken. */
async function startNode(args: readonly string[], readyTimeoutMs: number): Promise<AnvilNode> {
  const { command, prefix } = anvilBinary();
  let lastError: Error | undefined;
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const port = await freePort();
    const child = spawn(command, [...prefix, ...args, '--host', '127.0.0.1', '--port', String(port)], {
      stdio: ['ignore', 'ignore', 'pipe'], detached: true,
    });
    running.add(child);
    installExitHook();
    if (child.pid !== undefined) watch(child, port);
    let stderr = '';
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      if (stderr.length < 4_000) stderr += chunk;
    });
    let spawnError: Error | undefined;
    child.once('error', (err) => {
      spawnError = err;
    });
    const url = `http://127.0.0.1:${port}`; // as redactUrl names it in the headers
    const request = makeRequest(url);
    const deadline = Date.now() + readyTimeoutMs;
    let ready = false;
    while (Date.now() < deadline) {
      if (spawnError) throw new Error(`cannot start anvil (${command}): ${spawnError.message}`);
      if (child.exitCode !== null || child.signalCode !== null) break;
      try {
        const answer = await request('eth_chainId');
        if (typeof answer.result === 'string') {
          ready = true;
          break;
        }
      } catch {
        // not listening yet
      }
      await sleep(25);
    }
    if (ready) {
      const node: AnvilNode = {
        url,
        port,
        pid: child.pid!,
        request,
        async rpc<T>(method: string, params: unknown[] = []) {
          const answer = await request(method, params);
          if (answer.error) throw new Error(`anvil ${url} ${method}: ${answer.error.code} ${answer.error.message}`);
          return answer.result as T;
        },
        get exited() {
          return child.exitCode !== null || child.signalCode !== null;
        },
        stop: () => kill(child),
      };
      return node;
    }
    await kill(child);
    lastError = new Error(`anvil on port ${port} did not become ready (exit ${child.exitCode ?? child.signalCode}): ${stderr.trim().slice(0, 500)}`);
    // A taken port makes anvil exit at once: try another. Anything else is retried too, a few times.
  }
  throw lastError ?? new Error('anvil did not start');
}

/** Starts `count` anvil nodes with the same genesis and waits until each answers eth_chainId. */
export async function startAnvils(count: number, options: AnvilOptions = {}): Promise<AnvilCluster> {
  const chainId = options.chainId ?? 31337;
  const genesisTimestamp = options.timestamp ?? 1_700_000_000;
  const args = [
    '--silent',
    '--no-mining',
    '--chain-id', String(chainId),
    '--timestamp', String(genesisTimestamp),
    '--mnemonic', options.mnemonic ?? anvilMnemonic,
    ...(options.args ?? []),
  ];
  const settled = await Promise.allSettled(Array.from({ length: count }, () => startNode(args, options.readyTimeoutMs ?? 60_000)));
  const nodes = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) {
    await Promise.all(nodes.map((n) => n.stop()));
    throw failed.reason;
  }
  const cluster: AnvilCluster = {
    nodes,
    urls: nodes.map((n) => n.url),
    chainId,
    genesisTimestamp,
    mineSame: (rawTxs, timestamp, on = nodes) => mineSame(on, rawTxs, timestamp),
    async stop() {
      clusters.delete(cluster);
      await Promise.all(nodes.map((n) => n.stop()));
    },
  };
  clusters.add(cluster);
  return cluster;
}

/** Stops every cluster started by this process (for `test.after.always`). */
export async function stopAllAnvils(): Promise<void> {
  await Promise.all([...clusters].map((c) => c.stop()));
  await Promise.all([...running].map((c) => kill(c)));
}

async function mineSame(nodes: readonly AnvilNode[], rawTxs: readonly string[], timestamp: number): Promise<{ number: number; hash: string }> {
  const blocks = await Promise.all(
    nodes.map(async (node) => {
      for (const raw of rawTxs) await node.rpc('eth_sendRawTransaction', [raw]);
      await node.rpc('evm_setNextBlockTimestamp', [timestamp]);
      await node.rpc('evm_mine', []);
      return node.rpc<{ number: string; hash: string; transactions: string[] }>('eth_getBlockByNumber', ['latest', false]);
    }),
  );
  const first = blocks[0]!;
  for (const [i, b] of blocks.entries()) {
    if (b.hash !== first.hash) throw new Error(`mineSame: node ${i} mined ${b.number} ${b.hash}, node 0 mined ${first.number} ${first.hash}`);
    if (b.transactions.length !== rawTxs.length) throw new Error(`mineSame: node ${i} block ${b.number} has ${b.transactions.length} txs, expected ${rawTxs.length}`);
  }
  return { number: Number(first.number), hash: first.hash };
}

/** Dev account `index` of the mnemonic, with its private key (an ethers wallet, for signing). */
export function anvilWallet(index: number, mnemonic = anvilMnemonic): HDNodeWallet {
  return HDNodeWallet.fromPhrase(mnemonic, undefined, `m/44'/60'/0'/0/${index}`);
}

/** Signs a type-2 transaction deterministically (same inputs → same raw bytes and hash). */
export async function signTx(
  wallet: HDNodeWallet,
  tx: { chainId: number; nonce: number; to?: string | null; value?: bigint; data?: string; gasLimit?: bigint },
): Promise<string> {
  const t = Transaction.from({
    type: 2,
    chainId: tx.chainId,
    nonce: tx.nonce,
    to: tx.to ?? null,
    value: tx.value ?? 0n,
    data: tx.data ?? '0x',
    gasLimit: tx.gasLimit ?? 200_000n,
    maxFeePerGas: 10_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
  });
  return wallet.signTransaction(t);
}

/**
 * A tiny contract, hand-assembled. Its constructor stores 42 in slot 0 and emits
 * `LOG1(topic = keccak256("Stored(uint256)"), data = 42)`. Its runtime code returns slot 0 as a
 * 32-byte word for any call with calldata, and reverts with empty data for a call without.
 */
export const storageContract = (() => {
  const storedValue = 42n;
  const topic = keccakText('Stored(uint256)');
  // CALLDATASIZE ISZERO PUSH1 0x10 JUMPI  PUSH1 0 SLOAD PUSH1 0 MSTORE PUSH1 0x20 PUSH1 0 RETURN
  // 0x10: JUMPDEST PUSH1 0 PUSH1 0 REVERT
  const runtime = '0x361560105760005460005260206000f35b60006000fd';
  const runtimeLength = (runtime.length - 2) / 2;
  const value = toBeHex(storedValue, 1).slice(2);
  const head = [
    `60${value}600055`, // SSTORE(0, 42)
    `60${value}600052`, // MSTORE(0, 42)
    `7f${topic.slice(2)}60206000a1`, // LOG1(0, 32, topic)
  ].join('');
  // PUSH1 len DUP1 PUSH1 offset PUSH1 0 CODECOPY PUSH1 0 RETURN
  const tailLength = 2 + 1 + 2 + 2 + 1 + 2 + 1;
  const offset = head.length / 2 + tailLength;
  const hex1 = (n: number) => n.toString(16).padStart(2, '0');
  const tail = `60${hex1(runtimeLength)}8060${hex1(offset)}6000396000f3`;
  const initCode = `0x${head}${tail}${runtime.slice(2)}`;
  return {
    initCode,
    runtimeCode: runtime,
    storedValue,
    storedWord: zeroPadValue(toBeHex(storedValue), 32),
    topic,
    /** Any non-empty calldata returns slot 0. */
    readData: '0x01',
  };
})();

export interface SeededChain {
  chainId: number;
  deployer: string;
  contract: string;
  recipient: string;
  transferValue: bigint;
  /** Block 1: the deployment (one log). */
  deployBlock: number;
  /** Block 2: a transfer of `transferValue` to `recipient`. */
  transferBlock: number;
  /** Block 3: empty. */
  emptyBlock: number;
  /** Timestamp of block n (n ≥ 1). */
  timestampOf(n: number): number;
}

/**
 * Builds the same three blocks on every node of the cluster: 1 deploys `storageContract`,
 * 2 transfers 1.5 ETH to a fresh address, 3 is empty. Blocks are 12 s apart from genesis.
 */
export async function seedChain(cluster: AnvilCluster): Promise<SeededChain> {
  const wallet = anvilWallet(0);
  const chainId = cluster.chainId;
  const timestampOf = (n: number) => cluster.genesisTimestamp + 12 * n;
  const recipient = '0x00000000000000000000000000000000000b0b00';
  const transferValue = 1_500_000_000_000_000_000n;
  const deploy = await signTx(wallet, { chainId, nonce: 0, data: storageContract.initCode });
  const transfer = await signTx(wallet, { chainId, nonce: 1, to: recipient, value: transferValue, gasLimit: 21_000n });
  const b1 = await cluster.mineSame([deploy], timestampOf(1));
  const b2 = await cluster.mineSame([transfer], timestampOf(2));
  const b3 = await cluster.mineSame([], timestampOf(3));
  const contract = getCreateAddress({ from: wallet.address, nonce: 0 });
  const code = await cluster.nodes[0]!.rpc<string>('eth_getCode', [contract, toBeHex(b1.number)]);
  if (code !== storageContract.runtimeCode) throw new Error(`seedChain: deployed code is ${code}, expected ${storageContract.runtimeCode}`);
  return {
    chainId,
    deployer: wallet.address,
    contract,
    recipient,
    transferValue,
    deployBlock: b1.number,
    transferBlock: b2.number,
    emptyBlock: b3.number,
    timestampOf,
  };
}
