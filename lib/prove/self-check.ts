/**
 * The self-check of a chain in `auto` mode: before any answer of the chain is proven, one
 * upstream's header of a recent final block must hash to its fields, an account proof (the zero
 * address's) must prove against its `stateRoot`, and its receipts must rebuild its
 * `receiptsRoot`. Each part decides its own scope: the header decides the chain (a header that
 * does not hash to its fields: agreement for good, logged once with the reason); an account proof
 * that fails keeps state reads on agreement, a receipts root that is not rebuilt keeps receipts
 * and logs on agreement (Arbitrum's own receipt types, a chain whose receipts hold more than its
 * root), each logged once, and the rest of the chain is proven. A part a quirk of the chain covers
 * at that block is not asked. No upstream answering: agreement, checked again next round. Never a
 * guess: until it passed, the chain is on agreement.
 */
import { checkHeader, type BlockJson } from '../proof/header.js';
import { ProofError } from '../proof/failure.js';
import { checkAccountProof, type AccountProofJson } from '../proof/state.js';
import { checkReceipts, type ReceiptJson } from '../proof/receipts.js';
import { chainHead } from '../health/heads.js';
import type { Logger } from '../log.js';
import type { Chain, Upstream } from '../upstream/registry.js';
import { Cancellation } from '../upstream/transport/contract.js';
import { parseAnswer, payloadOf } from './job.js';
import { quirkBlocks, type QuirkScope } from '../proof/quirks.js';
import { proofModeOf } from './mode.js';

export interface SelfCheckOptions {
  timeoutMs: number;
  maxBytes: number;
  logger: Logger;
}

/** Blocks below the head taken as final on a chain whose upstreams report no finalized head (yet: the head tracker may not have polled). */
export const assumedFinalityDepth = 64n;

/** The scopes a passed self-check found unprovable, each with why (undefined: it proved, or a quirk covered it). */
export interface SelfCheckScopes {
  /** The account proof: state reads. */
  readonly state: string | undefined;
  /** The receipts root: receipts and logs. */
  readonly receipts: string | undefined;
}

/** The outcome: passed (the header proved; some scopes may not have), failed (the header did not: for good) or undecided (no upstream answered). */
export type SelfCheckResult = { kind: 'passed'; block: bigint; upstream: string; off: SelfCheckScopes } | { kind: 'failed'; reason: string } | { kind: 'undecided'; reason: string };

const describeFailure = (err: ProofError, upstream: Upstream) => `${err.reason} at ${err.field} (${upstream.label}): ${upstream.secrets.scrub(err.message)}`;

/** Runs one part of the self-check: a ProofError is its scope's failure (returned), anything else (no answer) is thrown. */
async function part(upstream: Upstream, check: () => Promise<unknown>): Promise<string | undefined> {
  try {
    await check();
    return undefined;
  } catch (err) {
    if (err instanceof ProofError) return describeFailure(err, upstream);
    throw err;
  }
}

async function call(upstream: Upstream, method: string, params: unknown[], options: SelfCheckOptions): Promise<unknown> {
  const response = await upstream.transport.send({ payload: payloadOf(method, params), requestId: 'omnigate-self-check', signal: new Cancellation(), timeoutMs: options.timeoutMs, maxBytes: options.maxBytes, background: true });
  const parsed = parseAnswer(response.body, method) as { result?: unknown; error?: { message?: unknown } };
  if (parsed.error !== undefined || !('result' in parsed)) throw new Error(`${method}: ${String(parsed.error?.message ?? 'no result')}`);
  return parsed.result;
}

/** Runs the self-check on one chain (its mode is not changed here: applySelfCheck does). */
export async function selfCheck(chain: Chain, options: SelfCheckOptions): Promise<SelfCheckResult> {
  const reasons: string[] = [];
  for (const upstream of chain.upstreams) {
    if (upstream.health.loop || upstream.health.wrongChainId !== undefined) continue;
    try {
      let block = chainHead(chain, 'finalized');
      if (block === undefined) {
        const head = BigInt((await call(upstream, 'eth_blockNumber', [], options)) as string);
        // A chain younger than that (a dev chain) is checked at its head: a genesis state may be
        // written unlike any later block's (anvil reports the empty root over funded accounts).
        block = head > assumedFinalityDepth ? head - assumedFinalityDepth : head;
      }
      const at = `0x${block.toString(16)}`;
      const header = checkHeader((await call(upstream, 'eth_getBlockByNumber', [at, false], options)) as BlockJson);
      const mark = { number: header.number, timestamp: header.timestamp };
      const address = `0x${'00'.repeat(20)}`;
      const state = quirkBlocks(chain.id, 'state', mark)
        ? undefined
        : await part(upstream, async () => checkAccountProof(header, (await call(upstream, 'eth_getProof', [address, [], at], options)) as AccountProofJson, { address }));
      const receipts = quirkBlocks(chain.id, 'receipts', mark)
        ? undefined
        : await part(upstream, async () => checkReceipts(header, (await call(upstream, 'eth_getBlockReceipts', [at], options)) as ReceiptJson[]));
      return { kind: 'passed', block, upstream: upstream.label, off: { state, receipts } };
    } catch (err) {
      const message = upstream.secrets.scrub((err as Error).message);
      if (err instanceof ProofError) return { kind: 'failed', reason: describeFailure(err, upstream) };
      reasons.push(`${upstream.label}: ${message}`);
    }
  }
  return { kind: 'undecided', reason: `no upstream answered the self-check: ${reasons.join('; ') || 'none usable'}` };
}

/** What each part of the self-check that failed keeps on agreement. */
const partScopes: readonly [keyof SelfCheckScopes, readonly QuirkScope[], string][] = [
  ['state', ['state'], 'state reads'],
  ['receipts', ['receipts'], 'receipts and logs'],
];

/** Applies a self-check's outcome to an `auto` chain's mode, logging a change once. */
export function applySelfCheck(chain: Chain, result: SelfCheckResult, logger: Logger): void {
  const state = proofModeOf(chain);
  if (state.configured !== 'auto' || state.mode === 'proof') return;
  if (result.kind === 'passed') {
    const kept: string[] = [];
    for (const [key, scopes, what] of partScopes) {
      const failed = result.off[key];
      if (failed === undefined) continue;
      for (const scope of scopes) state.off.set(scope, `auto: the self-check's ${key === 'state' ? 'account proof' : 'receipts root'} failed: ${what} by agreement: ${failed}`);
      kept.push(`${what} (${failed})`);
      logger.warn({ chain: chain.id, scope: key, reason: failed }, `proof mode: the self-check's ${key === 'state' ? 'account proof' : 'receipts root'} failed: ${what} stay on agreement, the rest of the chain is proven`);
    }
    state.mode = 'proof';
    state.reason = `auto: the self-check passed on block ${result.block} (${result.upstream})${kept.length > 0 ? `; by agreement: ${kept.join('; ')}` : ''}`;
    logger.info({ chain: chain.id, block: result.block.toString(), upstream: result.upstream }, 'proof mode: the self-check passed: answers are proven against agreed headers');
  } else if (result.kind === 'failed') {
    state.reason = `auto: the self-check failed: ${result.reason}`;
    logger.warn({ chain: chain.id, reason: result.reason }, 'proof mode: the self-check failed: the chain stays on agreement');
  } else state.reason = `auto: ${result.reason}`;
}

/** Whether a chain still waits for its self-check (auto, not decided, no quirk keeping it on agreement). */
export function awaitsSelfCheck(chain: Chain): boolean {
  const state = proofModeOf(chain);
  return state.configured === 'auto' && state.mode === 'agreement' && state.reason.startsWith('auto:') && !state.reason.startsWith('auto: the self-check failed');
}

/**
 * Runs the self-check of every chain that awaits it now, then every `intervalSeconds` for those
 * still undecided; `stop()` ends it.
 */
export function startSelfChecks(
  chains: Iterable<Chain>,
  options: SelfCheckOptions & { intervalSeconds: number; onResult?: (chain: Chain, result: SelfCheckResult) => void },
): { stop(): void; done: Promise<void> } {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const list = [...chains];
  const round = async () => {
    await Promise.all(
      list.filter(awaitsSelfCheck).map(async (chain) => {
        const result = await selfCheck(chain, options);
        if (stopped) return;
        applySelfCheck(chain, result, options.logger);
        options.onResult?.(chain, result);
      }),
    );
    if (!stopped && list.some(awaitsSelfCheck)) {
      timer = setTimeout(() => void round(), options.intervalSeconds * 1000);
      timer.unref();
    }
  };
  const done = round();
  return { stop: () => { stopped = true; clearTimeout(timer); }, done };
}
