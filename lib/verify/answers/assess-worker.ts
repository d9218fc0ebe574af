/**
 * The thread that judges large answers away from the event loop (off-thread.ts). It runs the
 * functions the main thread runs on a small answer (answers.ts judgeBody, which is assessBody's
 * verdict read in slices, or assessBody itself; redact.ts scrubberOf and echoerOf; missing.ts
 * lacksBlock) on the same inputs, so its verdict is the main thread's; an answer the transport
 * did not scan for its nesting (`task.maxDepth`) is scanned first (scan.ts nestsDeeperThan). The answer's bytes come in transferred (not copied) and go back the
 * same way with the verdict; the canonical text stays here (the hash stands for it).
 */
import { parentPort } from 'node:worker_threads';
import { echoerOf, scrubberOf } from '../../upstream/redact.js';
import { nestsDeeperThan } from '../../jsonrpc/scan.js';
import { judgeBody } from './sliced.js';
import { lacksBlock } from './missing.js';
import { judgedOf, nestedTooDeep, type Task, type Reply } from './off-thread.js';

/** The scrubber of each list of secrets seen (one list per config, so one or two entries). */
const scrubbers = new Map<string, (text: string) => string>();
/** The echo test of each upstream's own secrets seen (one per upstream with large answers). */
const echoers = new Map<string, (body: Buffer) => boolean>();

/** The function made of a list of secrets, kept while few lists are seen. */
function madeFor<F>(made: Map<string, F>, texts: readonly string[], make: (texts: readonly string[]) => F, most: number): F {
  const key = texts.join('\n');
  let f = made.get(key);
  if (!f) {
    if (made.size >= most) made.clear();
    f = make(texts);
    made.set(key, f);
  }
  return f;
}

/** One task: the same judgement as lib/verify/assess.ts assessOutcome makes of a body. */
export function judge(task: Task): Reply {
  const body = Buffer.from(task.bytes, 0, task.length);
  // Not scanned for its nesting yet (and not equal to bytes already judged): before anything parses it.
  if (task.known === undefined && task.maxDepth !== undefined && nestsDeeperThan(body, task.maxDepth)) {
    return { id: task.id, judged: { judgement: undefined, echoed: false, unchecked: nestedTooDeep }, bytes: task.bytes };
  }
  const scrub = madeFor(scrubbers, task.all, scrubberOf, 8);
  // The same bytes judged for the same request already (off-thread.ts): that verdict, the echo checked here.
  const assessment = task.known ?? judgeBody(body, task.payload, task.ignored, scrub, task.beyondHeads ? lacksBlock : undefined);
  // A refusal is relayed as written when no vote comes: its echo matters as an answer's does.
  const echoed = (assessment.ok || assessment.refused !== undefined) && madeFor(echoers, task.own, echoerOf, 256)(body);
  return { id: task.id, judged: judgedOf(assessment, echoed), bytes: task.bytes };
}

parentPort?.on('message', (task: Task) => {
  const reply = judge(task);
  parentPort!.postMessage(reply, [reply.bytes]);
});
// Loaded: from now on, a failure of this thread is a failure of one answer, not of its start.
parentPort?.postMessage('ready');
