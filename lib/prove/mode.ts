/**
 * Each chain's verify mode as it stands: what the config asked (`agreement`, `proof`, `auto`),
 * what applies now (`proof` or `agreement`) and why. `agreement` is never changed; `proof` applies
 * at once; `auto` is agreement until the chain's self-check passed (self-check.ts), and stays so
 * when a quirk of the chain (lib/proof/quirks.ts) makes its headers unprovable or the self-check's
 * header failed. Below the mode, each scope (state, receipts, blooms) is decided on its own: a
 * quirk keeps it on agreement for every block or for the blocks before a cut-off, and a part of the
 * self-check that failed (the account proof: state; the receipts root: receipts and logs) keeps it
 * on agreement for good. /chains shows the state, scope by scope.
 */
import type { VerifyMode } from '../../config/types.js';
import { describeCutoff, quirkBlocks, quirkOf, type BlockMark, type QuirkScope } from '../proof/quirks.js';
import type { Chain } from '../upstream/registry.js';

export interface ChainProofMode {
  readonly configured: VerifyMode;
  /** What applies now. */
  mode: 'proof' | 'agreement';
  /** Why, in a sentence (for /chains and the log line). */
  reason: string;
  /** Scopes the self-check found unprovable on this chain, with why: by agreement for good. */
  readonly off: Map<QuirkScope, string>;
}

const modes = new WeakMap<Chain, ChainProofMode>();

/** Sets a chain's mode from its config (rpcPipeline, once per chain). */
export function initProofMode(chain: Chain, configured: VerifyMode): ChainProofMode {
  const quirk = quirkOf(chain.id);
  const off = new Map<QuirkScope, string>();
  const state: ChainProofMode =
    configured === 'agreement'
      ? { configured, mode: 'agreement', reason: 'configured: verify: agreement', off }
      : quirk?.scopes.includes('header')
        ? { configured, mode: 'agreement', reason: `${quirk.name} (chain ${chain.id}): ${quirk.why}`, off }
        : configured === 'proof'
          ? { configured, mode: 'proof', reason: 'configured: verify: proof', off }
          : { configured, mode: 'agreement', reason: 'auto: the self-check at start has not passed yet', off };
  modes.set(chain, state);
  return state;
}

/** The chain's mode (agreement for a chain rpcPipeline did not set up: a registry of a test's own). */
export function proofModeOf(chain: Chain): ChainProofMode {
  return modes.get(chain) ?? initProofMode(chain, 'agreement');
}

/** Whether answers of this scope about `block` (the agreed header, or the lowest block of a range) are proven on the chain now. */
export function proves(chain: Chain, scope: QuirkScope, block: BlockMark): boolean {
  const state = proofModeOf(chain);
  return state.mode === 'proof' && !state.off.has(scope) && !quirkBlocks(chain.id, scope, block);
}

/**
 * Whether answers of this scope may be proven on the chain at some block: false when the chain is
 * on agreement, the self-check turned the scope off, or a quirk covers it at every block. (Before
 * any header is agreed: a request that cannot be proven at any block skips the proof at once.)
 */
export function provesSomewhere(chain: Chain, scope: QuirkScope): boolean {
  const state = proofModeOf(chain);
  return state.mode === 'proof' && !state.off.has(scope) && !quirkBlocks(chain.id, scope);
}

/** The scopes /chains describes: headers and transactions, state, receipts, logs (the blooms). */
const shownScopes = ['header', 'state', 'receipts', 'bloom'] as const;

export interface ScopeMode {
  readonly scope: (typeof shownScopes)[number];
  /** `proof`: proven (from `provenFrom` on, when set); `agreement`: never proven on this chain now. */
  readonly mode: 'proof' | 'agreement';
  readonly provenFrom: string | null;
  readonly reason: string;
}

function scopeMode(chain: Chain, state: ChainProofMode, scope: ScopeMode['scope']): ScopeMode {
  if (state.mode !== 'proof') return { scope, mode: 'agreement', provenFrom: null, reason: state.reason };
  const off = state.off.get(scope);
  if (off !== undefined) return { scope, mode: 'agreement', provenFrom: null, reason: off };
  const quirk = quirkOf(chain.id);
  if (quirk === undefined || !quirk.scopes.includes(scope)) return { scope, mode: 'proof', provenFrom: null, reason: state.reason };
  const why = `${quirk.name} (chain ${chain.id}): ${quirk.why}`;
  if (quirk.before === undefined) return { scope, mode: 'agreement', provenFrom: null, reason: why };
  const from = describeCutoff(quirk.before);
  return { scope, mode: 'proof', provenFrom: from, reason: `proven from ${from} on; before it by agreement: ${why}` };
}

/** What /chains shows: the configured mode, the one that applies, why; then each scope, whether it is proven and why. */
export function describeProofMode(chain: Chain): { configured: VerifyMode; mode: 'proof' | 'agreement'; reason: string; scopes: ScopeMode[] } {
  const state = proofModeOf(chain);
  return { configured: state.configured, mode: state.mode, reason: state.reason, scopes: shownScopes.map((s) => scopeMode(chain, state, s)) };
}
