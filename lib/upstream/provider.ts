/**
 * Who runs an upstream: one vote per provider. Pure.
 *
 * N agreeing answers vouch for something only when they come from N independent providers: the
 * same node listed twice (`https://x/` and `https://x/#b`), or one provider reached over https
 * and wss, must count once. Two steps:
 * - normalizeUpstreamUrl: the WHATWG form (scheme and host lower-cased, default port dropped,
 *   percent-encoded path), without the fragment (never sent) and without an empty `?`;
 * - providerOf: the provider identity. An explicit `provider:` label wins; otherwise the host's
 *   registrable domain (eTLD+1, from the Public Suffix List via `tldts`, private suffixes
 *   included, so `a.herokuapp.com` and `b.herokuapp.com` are two owners); for an IP address,
 *   `localhost` or any host without a registrable domain, the host and port (`127.0.0.1:8545`):
 *   two local nodes on two ports are two nodes, while one node's http and ws endpoints on one
 *   port are one; the loopback names (`localhost`, `[::1]`, and `0.0.0.0`, `[::]`) are
 *   `127.0.0.1`, an IPv4-mapped IPv6 address is its IPv4 address, a fully qualified name's final
 *   dot is dropped.
 */
import { getDomain } from 'tldts';

/** The URL as it is sent and compared, or undefined when it is not a URL. */
export function normalizeUpstreamUrl(text: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  url.hash = '';
  if (url.search === '') url.search = ''; // `https://x/?` → `https://x/`
  return url;
}

/** The provider identity of an upstream URL (see the module comment); `label` overrides. */
export function providerOf(url: string, label?: string): string {
  if (label !== undefined) return label;
  const parsed = new URL(url);
  const host = sameHost(parsed.hostname);
  // (`*.localhost` has a "registrable domain" for tldts; an IP address has none.)
  const domain = host === '127.0.0.1' ? null : getDomain(host.replace(/^\[|\]$/g, ''), { allowPrivateDomains: true });
  if (domain) return domain;
  const port = parsed.port || (parsed.protocol === 'https:' || parsed.protocol === 'wss:' ? '443' : '80');
  return `${host}:${port}`;
}

/**
 * One name for the spellings of one address: an IPv4-mapped IPv6 address (`[::ffff:7f00:1]`,
 * as WHATWG writes `[::ffff:127.0.0.1]`) is its IPv4 address, a name written fully qualified
 * (`node.`, `localhost.`: WHATWG keeps the final dot) is the name, and `localhost`,
 * `*.localhost` (RFC 6761), `[::1]` and the unspecified addresses `0.0.0.0` and `[::]` (which
 * reach this host) are `127.0.0.1`: a node listening on all loopback addresses, listed under two
 * of these names, is one node.
 */
function sameHost(hostname: string): string {
  if (hostname.endsWith('.')) hostname = hostname.slice(0, -1);
  const mapped = /^\[::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})\]$/.exec(hostname);
  if (mapped) {
    const [hi, lo] = [parseInt(mapped[1]!, 16), parseInt(mapped[2]!, 16)];
    hostname = `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  }
  if (hostname === 'localhost' || hostname.endsWith('.localhost') || hostname === '[::1]' || hostname === '0.0.0.0' || hostname === '[::]') return '127.0.0.1';
  return hostname;
}

/** Distinct providers among a chain's upstreams (the most confirmations it can give). */
export function countProviders(urls: readonly string[], labels?: readonly (string | undefined)[]): number {
  return new Set(urls.map((url, i) => providerOf(url, labels?.[i]))).size;
}
