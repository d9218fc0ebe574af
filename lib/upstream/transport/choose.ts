/**
 * Which client carries the calls of HTTP(S) upstreams (config `upstreams.client`): node (node:http,
 * http.ts), undici (undici.ts), or auto, the default: undici, unless node's HTTP client has been
 * replaced in this process when the upstreams are built: nock (14) and msw put a Proxy in place of
 * `http.request`, OpenTelemetry's http instrumentation a wrapper marked `__wrapped`. Whatever
 * replaced it wants to see the calls (a test's mocks, traces), so they go through node:http as
 * before. A user who wants certainty either way names the client.
 */
import http from 'node:http';
import https from 'node:https';
import { types } from 'node:util';

export type HttpClient = 'node' | 'undici';
export type HttpClientSetting = HttpClient | 'auto';

/** Whether a function of node's client was put in place by someone: a Proxy, or a shimmer wrapper. */
function replaced(fn: unknown): boolean {
  return types.isProxy(fn) || (typeof fn === 'function' && ('__wrapped' in fn || '__original' in fn));
}

/** Whether node's HTTP client is intercepted in this process now (nock, msw, OpenTelemetry's http instrumentation). */
export function nodeHttpIntercepted(): boolean {
  return replaced(http.request) || replaced(https.request) || replaced(http.ClientRequest);
}

/** The client that `setting` means now (absent: auto, the default). */
export function chooseClient(setting: HttpClientSetting = 'auto'): HttpClient {
  if (setting !== 'auto') return setting;
  return nodeHttpIntercepted() ? 'node' : 'undici';
}
