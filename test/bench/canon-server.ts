/**
 * Bench child: canonicalize+hash of the 2.5 MB eth_getLogs reply, in isolation: its own fresh
 * process (the bench process's heap, grown by every load run before, would slow the collector
 * this measures), running the built code (dist/) as omnigate runs it.
 * Commands: `time` { runs } → medians (ms) of assessBody (parse + canonical form + SHA-256),
 * canonicalForm()+sha256Hex alone and JSON.parse alone. Under `--cpu-prof` (BENCH_PROFILE=canon)
 * the profile is written when the bench stops this child.
 */
import { assessBody } from '../../dist/lib/verify/answers/answers.js';
import { canonicalForm, sha256Hex } from '../../dist/lib/verify/answers/canonical.js';
import type { RpcPayload } from '../../lib/jsonrpc/types.js';
import { childMain } from './ipc.js';
import { LOG_COUNT, replyText, requests } from './payloads.js';

export interface Timing {
  median: number;
  min: number;
  max: number;
}
export interface CanonTimings {
  bytes: number;
  logs: number;
  runs: number;
  assess: Timing;
  canon: Timing;
  parse: Timing;
}

const bodyText = replyText('eth_getLogs', 2, 1);
const body = Buffer.from(bodyText);
const payload: RpcPayload = {
  calls: [{ id: 1, method: 'eth_getLogs', params: requests.getLogs.params }],
  batch: false,
  raw: Buffer.from(JSON.stringify(requests.getLogs)),
};
const parsed = JSON.parse(bodyText) as { result: unknown };

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

function measure(runs: number, fn: () => unknown): Timing {
  for (let i = 0; i < 5; i += 1) fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const t = performance.now();
    fn();
    times.push(performance.now() - t);
  }
  return { median: median(times), min: Math.min(...times), max: Math.max(...times) };
}

function time(runs: number): CanonTimings {
  const assess = measure(runs, () => {
    const a = assessBody(body, payload);
    if (!a.ok) throw new Error(a.reason);
  });
  const canon = measure(runs, () => sha256Hex(canonicalForm('eth_getLogs', { result: parsed.result })));
  const parse = measure(runs, () => JSON.parse(body.toString('utf8')));
  return { bytes: body.length, logs: LOG_COUNT, runs, assess, canon, parse };
}

const child = childMain({
  onCommand(command) {
    if (command.cmd === 'time') return time(Number(command.runs) || 30);
    throw new Error(`unknown command ${command.cmd}`);
  },
});
child.ready({ pid: process.pid });
