/**
 * The one connection of a WebSocket upstream (lib/upstream/transport/ws.ts): opened on first use;
 * after it drops, the next call reconnects, and after repeated failures calls fail at once until
 * a backoff (250 ms doubling to 30 s) has passed, so a dead ws upstream costs one fast failure,
 * not a handshake timeout per request. A connection that stops answering (a peer gone without a
 * FIN: a half-open TCP connection stays "open" for ever) is found by a ping every `heartbeatMs`:
 * when neither a pong nor any message came since the last ping, it is dropped. The verdict is
 * taken after the sockets were read: an event loop held past the period must not drop a
 * connection whose pong is waiting in its socket.
 */
import WebSocket from 'ws';
import { UpstreamCallError } from './contract.js';

export interface WsConnectionOptions {
  maxBytes: number;
  handshakeTimeoutMs?: number;
  via?: string;
  heartbeatMs?: number;
  /** The first backoff after a failed handshake, doubling with each failure to at most 30 s (default 250 ms). */
  backoffMs?: number;
}

/** What the connection tells its calls: a message came; a connection closed, failing the calls written on it with `err`. */
export interface WsConnectionEvents {
  message(data: WebSocket.RawData): void;
  /** A message could not be read (a throw out of `message`): every call in flight fails. */
  unreadable(err: Error): void;
  closed(err: UpstreamCallError, ws: WebSocket): void;
}

export class WsConnection {
  private socket: WebSocket | undefined = undefined;
  private opening: Promise<WebSocket> | undefined = undefined;
  /** The connection being opened (its handshake not yet answered): close() ends it at once. */
  private handshaking: WebSocket | undefined = undefined;
  private failures = 0;
  private retryAt = 0;
  private tooLarge = false;

  constructor(
    private readonly url: string,
    private readonly options: WsConnectionOptions,
    private readonly events: WsConnectionEvents,
  ) {}

  /** The open connection, opening it if need be (a rejection with sent: false when it cannot be). */
  connect(): Promise<WebSocket> {
    if (this.socket?.readyState === WebSocket.OPEN) return Promise.resolve(this.socket);
    if (this.opening) return this.opening;
    if (Date.now() < this.retryAt) {
      return Promise.reject(new UpstreamCallError('closed', `connection down, next attempt in ${this.retryAt - Date.now()} ms`, { sent: false }));
    }
    this.opening = new Promise<WebSocket>((resolve, reject) => this.open(resolve, reject));
    return this.opening;
  }

  private open(resolve: (ws: WebSocket) => void, reject: (err: Error) => void): void {
    const { options, events } = this;
    const ws = new WebSocket(this.url, {
      maxPayload: options.maxBytes,
      handshakeTimeout: options.handshakeTimeoutMs ?? 5_000,
      perMessageDeflate: false,
      ...(options.via ? { headers: { Via: options.via } } : {}),
    });
    this.handshaking = ws;
    // Whether a pong or a message came since the last ping; whether the heartbeat dropped it.
    let alive = true;
    let dropped = false;
    let heartbeat: NodeJS.Timeout | undefined;
    const every = options.heartbeatMs ?? 15_000;
    ws.on('open', () => {
      if (this.handshaking === ws) this.handshaking = undefined;
      this.failures = 0;
      this.socket = ws;
      this.opening = undefined;
      if (every > 0) {
        const ping = () => {
          alive = false;
          ws.ping();
        };
        heartbeat = setInterval(() => {
          if (alive) return ping();
          // Nothing read since the last ping; but timers run before sockets are read, and an
          // event loop held past the period (a busy gateway) has not yet read a pong that came in
          // time. The verdict waits for that read: an immediate runs after it.
          setImmediate(() => {
            if (ws.readyState !== WebSocket.OPEN) return;
            if (alive) return ping();
            dropped = true;
            ws.terminate(); // 'close' follows: its calls fail
          });
        }, every);
        heartbeat.unref();
      }
      resolve(ws);
    });
    ws.on('pong', () => (alive = true));
    ws.on('message', (data) => {
      alive = true;
      // Nothing an upstream sends may throw out of an event handler (that ends the process).
      try {
        events.message(data);
      } catch (err) {
        events.unreadable(new UpstreamCallError('transport', `unreadable message: ${(err as Error).message}`));
      }
    });
    ws.on('error', (err: Error & { code?: string }) => {
      if (err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') this.tooLarge = true;
      if (this.socket !== ws) {
        if (this.handshaking === ws) this.handshaking = undefined;
        this.failures += 1;
        this.retryAt = Date.now() + Math.min((this.options.backoffMs ?? 250) * 2 ** (this.failures - 1), 30_000);
        this.opening = undefined;
        // The handshake failed: no call was written on this connection.
        reject(new UpstreamCallError('transport', `websocket: ${err.message}`, { sent: false }));
      }
    });
    ws.on('close', (code) => {
      clearInterval(heartbeat);
      if (this.socket === ws) this.socket = undefined;
      // ws drops the connection (1009, or 1006 as seen here) when a message is over maxPayload.
      const overLimit = this.tooLarge || code === 1009;
      this.tooLarge = false;
      // Only the calls written on this connection: a newer one may already carry others.
      events.closed(
        overLimit
          ? new UpstreamCallError('too-large', `answer over the ${options.maxBytes}-byte limit (the connection is reopened)`)
          : new UpstreamCallError('closed', dropped ? `websocket dropped: no pong nor message for ${every} ms` : `websocket closed (code ${code})`),
        ws,
      );
    });
  }

  /**
   * Starts the close handshake of the open connection, if one is open (its 'close' fails the
   * calls still written on it); the next call opens a new one. Not a drop: no backoff follows.
   */
  closeQuietly(): void {
    if (this.socket?.readyState === WebSocket.OPEN) this.socket.close(1000);
  }

  /**
   * Closes the connection (waiting up to 1 s for the close handshake). A handshake in progress is
   * abandoned: waiting for it held close() for up to the handshake timeout (an upstream that
   * accepts TCP and never answers), and a call waiting for it was written once it opened.
   */
  async close(): Promise<void> {
    this.handshaking?.terminate();
    const ws = this.socket ?? (await this.opening?.catch(() => undefined));
    if (!ws || ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      ws.once('close', () => resolve());
      ws.close();
      setTimeout(() => {
        ws.terminate();
        resolve();
      }, 1_000).unref();
    });
  }
}
