/**
 * The execution-apis conformance corpus (test/fixtures/execution-apis, see its README): each
 * `.io` file holds `>> request` and `<< response` lines, as a real client answered them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fromRoot } from './paths.js';

export interface RecordedPair {
  /** `<method folder>/<file>#<k>` */
  name: string;
  method: string;
  /** The request as written, and parsed. */
  requestText: string;
  request: { jsonrpc: string; id: unknown; method: string; params?: unknown[] };
  /** The response as the node wrote it. */
  responseText: string;
  response: { id: unknown; result?: unknown; error?: { code: number; message: string; data?: unknown } };
}

export const corpusDir = fromRoot('test', 'fixtures', 'execution-apis');

/** Every request/response pair of the corpus, in file order. */
export function recordedPairs(): RecordedPair[] {
  const pairs: RecordedPair[] = [];
  for (const method of readdirSync(corpusDir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort()) {
    for (const file of readdirSync(path.join(corpusDir, method)).filter((f) => f.endsWith('.io')).sort()) {
      const lines = readFileSync(path.join(corpusDir, method, file), 'utf8').split('\n');
      let request: string | undefined;
      let k = 0;
      for (const line of lines) {
        if (line.startsWith('>> ')) request = line.slice(3);
        else if (line.startsWith('<< ')) {
          if (request === undefined) throw new Error(`${method}/${file}: a response without a request`);
          const responseText = line.slice(3);
          pairs.push({
            name: `${method}/${file}#${k++}`,
            method,
            requestText: request,
            request: JSON.parse(request),
            responseText,
            response: JSON.parse(responseText),
          });
          request = undefined;
        }
      }
    }
  }
  return pairs;
}

/** The response text with its id replaced by `id` (the recorded id is the first "id" member). */
export function withId(responseText: string, recordedId: unknown, id: unknown): string {
  const token = `"id":${JSON.stringify(recordedId)}`;
  const at = responseText.indexOf(token);
  if (at < 0) throw new Error(`no ${token} in ${responseText.slice(0, 80)}`);
  return `${responseText.slice(0, at)}"id":${JSON.stringify(id)}${responseText.slice(at + token.length)}`;
}
