/**
 * Summarises a V8 `.cpuprofile` (from `node --cpu-prof`): self time per function (name, file,
 * line), largest first, with the share of the non-idle time.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface HotSpot {
  name: string;
  where: string;
  selfMs: number;
  share: number;
}

export async function summarizeProfile(file: string, top = 25): Promise<{ busyMs: number; idleMs: number; spots: HotSpot[] }> {
  const profile = JSON.parse(await readFile(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const grouped = new Map<string, HotSpot>();
  let idle = 0;
  let busy = 0;
  for (const [id, us] of self) {
    const node = byId.get(id)!;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') {
      idle += us;
      continue;
    }
    busy += us;
    const file = url ? url.replace(/^file:\/\//, '').replace(`${process.cwd()}${path.sep}`, '') : '';
    const where = file ? `${file}:${lineNumber + 1}` : '';
    const key = `${functionName}@${where}`;
    const spot = grouped.get(key) ?? { name: functionName || '(anonymous)', where, selfMs: 0, share: 0 };
    spot.selfMs += us / 1000;
    grouped.set(key, spot);
  }
  const spots = [...grouped.values()].sort((a, b) => b.selfMs - a.selfMs).slice(0, top);
  for (const s of spots) s.share = s.selfMs / (busy / 1000);
  return { busyMs: busy / 1000, idleMs: idle / 1000, spots };
}
