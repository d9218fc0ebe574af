/**
 * The node:http Agent of an HTTP(S) upstream when the caller hands in none: a proxy agent when
 * `proxy` (config `upstreams.proxy`) or the environment (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, with
 * NO_PROXY) names one, else a plain keep-alive agent; either way one whose idle sockets are
 * destroyed when a stray byte arrives on them.
 */
import http from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';
import type tls from 'node:tls';
import { HttpProxyAgent } from 'http-proxy-agent';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { getProxyForUrl } from 'proxy-from-env';
import { ConfigError } from '../../errors.js';
import { userInfoDecodes } from './call.js';

export interface AgentSettings {
  /**
   * Sockets open at once to this upstream; calls beyond wait for one (config `upstreams.maxSockets`).
   * With a caller's agent, its own maxSockets is the limit unless this is given.
   */
  maxSockets?: number;
  /** How long an idle kept-alive socket stays open, in ms (config `upstreams.keepAliveMs`). */
  keepAliveMs?: number;
  /** An http(s) proxy URL for this upstream (config `upstreams.proxy`); the environment is then not read. */
  proxy?: string;
  /** TLS options added to the defaults (a private CA, say). */
  tls?: tls.ConnectionOptions;
}

/** The defaults of `upstreams.maxSockets` and `upstreams.keepAliveMs` (what the pool before this one used). */
export const defaultMaxSockets = 128;
export const defaultKeepAliveMs = 30_000;

/**
 * The proxy URL for `url`: the given one, else the environment's (NO_PROXY applied), else none.
 * One from the environment that is not an http(s) URL, or whose user-info does not
 * percent-decode (call.ts userInfoDecodes), is a ConfigError naming the variables,
 * not its value (its user-info is the proxy's password); the config's is checked at load.
 */
export function proxyFor(url: string, configured: string | undefined): string | undefined {
  if (configured) return configured;
  const proxy = getProxyForUrl(url) || undefined;
  if (proxy !== undefined && !(URL.canParse(proxy) && /^https?:$/.test(new URL(proxy).protocol) && userInfoDecodes(new URL(proxy)))) {
    const scheme = new URL(url).protocol.slice(0, -1);
    const names = `${scheme.toUpperCase()}_PROXY, ${scheme}_proxy, ALL_PROXY or all_proxy`;
    throw new ConfigError(
      [`the proxy the environment names for ${scheme} upstreams (${names}) is not an http:// or https:// URL, or its user or password has a % that is not a percent escape (its value is not shown: it may hold a password): correct or unset it, or name the upstream's host in NO_PROXY. Example: HTTPS_PROXY=http://user:password@proxy.internal:3128`],
      'environment',
    );
  }
  return proxy;
}

/** The agent of one upstream, when the caller handed in none. */
export function createAgent(url: URL, options: AgentSettings = {}): http.Agent {
  const secure = url.protocol === 'https:';
  const agentOptions: http.AgentOptions = {
    keepAlive: true,
    keepAliveMsecs: 1_000,
    maxSockets: options.maxSockets ?? defaultMaxSockets,
    maxFreeSockets: options.maxSockets ?? defaultMaxSockets,
    timeout: options.keepAliveMs ?? defaultKeepAliveMs,
    // The most recently used socket first: a hot set stays open, the rest time out.
    scheduling: 'lifo',
  };
  const proxy = proxyFor(url.href, options.proxy);
  if (proxy) {
    return guardIdleSockets(secure ? new HttpsProxyAgent(proxy, agentOptions) : new HttpProxyAgent(proxy, agentOptions));
  }
  return guardIdleSockets(secure ? new https.Agent({ ...agentOptions, ...options.tls }) : new http.Agent(agentOptions));
}

/**
 * A kept-alive socket that receives any byte while idle is destroyed: nothing was asked on it,
 * so the bytes are a stray answer (or worse) and the socket's framing cannot be trusted. Uses the
 * agent's documented hooks: keepSocketAlive (a socket goes idle) and reuseSocket (it is taken).
 */
function guardIdleSockets<A extends http.Agent>(agent: A): A {
  const keep = agent.keepSocketAlive.bind(agent) as (socket: Duplex) => boolean;
  const reuse = agent.reuseSocket.bind(agent);
  agent.keepSocketAlive = ((socket: Duplex) => {
    if (socket.readableLength > 0 || !keep(socket)) return false;
    socket.on('data', onIdleBytes);
    return true;
  }) as http.Agent['keepSocketAlive'];
  agent.reuseSocket = (socket, req) => {
    socket.removeListener('data', onIdleBytes);
    reuse(socket, req);
  };
  return agent;
}

function onIdleBytes(this: Duplex): void {
  this.destroy();
}
