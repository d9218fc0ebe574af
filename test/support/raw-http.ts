/**
 * One HTTP exchange written by hand on a raw socket: for what a client library would not send (a
 * request target in absolute form, an odd Expect, CONNECT, malformed framing).
 */
import { once } from 'node:events';
import net from 'node:net';
import type { ExecutionContext } from 'ava';

export interface RawAnswer {
  /** The status line and the header lines, as written. */
  head: string;
  status: number;
  body: string;
  /** The body parsed as JSON; undefined when it is not JSON. */
  json: any;
}

/** Writes `text` on a new connection; the answer read until the server closes it (ask for that: `Connection: close`, or a request the server closes after). */
export async function exchange(t: ExecutionContext, port: number, text: string): Promise<RawAnswer> {
  const socket = net.connect(port, '127.0.0.1');
  t.teardown(() => void socket.destroy());
  // (a reset after the answer ends the exchange as a close does: what was read is judged)
  socket.on('error', () => {});
  await once(socket, 'connect');
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  socket.write(text);
  await once(socket, 'close');
  const all = Buffer.concat(chunks).toString();
  const head = all.slice(0, all.indexOf('\r\n\r\n'));
  const body = all.slice(all.indexOf('\r\n\r\n') + 4);
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    json = undefined;
  }
  return { head, status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(head)?.[1]), body, json };
}
