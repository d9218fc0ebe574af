/** Runs the built CLI (`dist/lib/cli.js`) as a child process, as a user would, and reads its output. */
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

const cli = resolve('dist/lib/cli.js');

export interface Run {
  child: ChildProcess;
  out: string[];
  err: string[];
  exited: Promise<number | null>;
}

/** Starts `node [nodeArgs] [--import preload] dist/lib/cli.js ...args` with the given extra environment. */
export function runCli(args: string[], env: Record<string, string> = {}, options: { preload?: string; nodeArgs?: string[] } = {}): Run {
  const node = [...(options.nodeArgs ?? []), ...(options.preload ? ['--import', options.preload] : [])];
  const child = spawn(process.execPath, [...node, cli, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const out: string[] = [];
  const err: string[] = [];
  child.stdout!.on('data', (d: Buffer) => out.push(d.toString()));
  child.stderr!.on('data', (d: Buffer) => err.push(d.toString()));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { child, out, err, exited };
}

/** The JSON log lines printed so far. */
export const logLines = (r: Run) =>
  r.out
    .join('')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** Waits for the `omnigate listening` log line and returns its port. */
export async function listeningPort(r: Run): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const line = logLines(r).find((l) => l.msg === 'omnigate listening');
    if (line) return line.port as number;
    if (r.child.exitCode !== null) throw new Error(`exited: ${r.err.join('')}`);
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error(`never listened: ${r.out.join('')} ${r.err.join('')}`);
}
