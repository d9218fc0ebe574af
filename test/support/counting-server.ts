/**
 * Fake upstream servers that count the connections open on their side: what the socket cap's
 * tests read. One count may be shared by several servers (open now, the most at once, every
 * connection opened). A connection is counted down at the client's FIN ('end'), which node reads
 * before any connection the client opens after closing this one ('close' comes a loop phase
 * later). A server may count in several (every server's, and its own). Each server is closed, its
 * connections destroyed, in the test's teardown.
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { ExecutionContext } from 'ava';

/** Connections open on the servers that share it. */
export class ConnectionCount {
  open = 0;
  most = 0;
  opened = 0;
}

/** An HTTP server on 127.0.0.1, port 0, keeping connections alive a minute, counted in `count` (each of them); its origin. */
export async function countingServer(t: ExecutionContext, count: ConnectionCount | readonly ConnectionCount[], handler: http.RequestListener): Promise<string> {
  const counts = Array.isArray(count) ? (count as readonly ConnectionCount[]) : [count as ConnectionCount];
  const sockets = new Set<Socket>();
  const server = http.createServer(handler);
  server.keepAliveTimeout = 60_000;
  server.on('connection', (socket: Socket) => {
    for (const c of counts) {
      c.opened += 1;
      c.open += 1;
      c.most = Math.max(c.most, c.open);
    }
    sockets.add(socket);
    let counted = true;
    const gone = () => {
      if (!counted) return;
      counted = false;
      for (const c of counts) c.open -= 1;
      sockets.delete(socket);
    };
    socket.on('end', gone);
    socket.on('close', gone);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}
