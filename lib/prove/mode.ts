/**
 * Each chain's verify mode as it stands: what the config asked (`agreement`, `proof`, `auto`),
 * what applies now (`proof` or `agreement`) and why. `agreement` is never changed; `proof` applies
 * at once; `auto` is agreement until the chain's self-check passed (self-check.ts), and stays so
 * when a quirk of the chain (lib/proof/quirks.ts) makes its headers unprovable or the self-check
 * failed. Quirks that cover some proofs only (blooms, receipts, state) keep those methods on
 * agreement in either mode. /chains shows the state.
 */
import type { VerifyMode } from '../../config/types.js';
import { quirkBlocks, quirkOf, type QuirkScope } from '../proof/quirks.js';
import type { Chain } from '../upstream/registry.js';

export interface ChainProofMode {
  readonly configured: VerifyMode;
  /** What applies now. */
  mode: 'proof' | 'agreement';
  /** Why, in a sentence (for /chains and the log line). */
  reason: string;
}

const modes = new WeakMap<Chain, ChainProofMode>();

/** Sets a chain's mode from its config (rpcPipeline, once per chain). */
export function initProofMode(chain: Chain, configured: VerifyMode): ChainProofMode {
  const quirk = quirkOf(chain.id);
  const state: ChainProofMode =
    configured === 'agreement'
      ? { configured, mode: 'agreement', reason: 'configured: verify: agreement' }
      : quirk?.scopes.includes('header')
        ? { configured, mode: 'agreement', reason: `${quirk.name} (chain ${chain.id}): ${quirk.why}` }
        : configured === 'proof'
          ? { configured, mode: 'proof', reason: 'configured: verify: proof' }
          : { configured, mode: 'agreement', reason: 'auto: the self-check at start has not passed yet' };
  modes.set(chain, state);
  return state;
}

/** The chain's mode (agreement for a chain rpcPipeline did not set up: a registry of a test's own). */
export function proofModeOf(chain: Chain): ChainProofMode {
  return modes.get(chain) ?? initProofMode(chain, 'agreement');
}

/** Whether answers of this scope are proven on the chain now. */
export function proves(chain: Chain, scope: QuirkScope): boolean {
  return proofModeOf(chain).mode === 'proof' && !quirkBlocks(chain.id, scope);
}

/** What /chains shows: the configured mode, the one that applies, why. */
export function describeProofMode(chain: Chain): { configured: VerifyMode; mode: 'proof' | 'agreement'; reason: string } {
  const state = proofModeOf(chain);
  return { configured: state.configured, mode: state.mode, reason: state.reason };
}
