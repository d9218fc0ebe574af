/**
 * GET / on `omnigate serve`: what this server offers, with links. JSON by default (curl, scripts);
 * a small HTML page when the client prefers text/html (a browser). Only the exact path `/`:
 * everything else goes to next(). A mounted pipeline does not include it (the host app owns
 * its root).
 */
import { pathOf } from '../pipeline/url.js';
import type { Middleware } from '../pipeline/compose.js';
import { MethodNotAllowedError } from '../errors.js';
import { LIST_ROUTES, TRANSACTION_PATH_PREFIX } from '../indexer/catalog.js';

export interface HomeRoute {
  method: 'GET' | 'POST';
  path: string;
  description: string;
  /** Concrete links for this server (e.g. one per configured chain). */
  links?: string[];
}

export interface Home {
  name: 'omnigate';
  description: string;
  chains: string[];
  routes: HomeRoute[];
}

/** `admin`: /chains and /metrics are served on the admin address, not listed here. */
export function buildHome(options: { chains: readonly string[]; indexer: boolean; admin?: boolean }): Home {
  const chains = [...options.chains];
  const first = chains[0] ?? '1';
  const routes: HomeRoute[] = [
    { method: 'POST', path: '/rpc/{chainId}', description: 'JSON-RPC for a configured chain, verified by the chain\'s confirmations', links: chains.map((id) => `/rpc/${id}`) },
    { method: 'POST', path: '/confirmations/{n}/rpc/{chainId}', description: 'JSON-RPC answered only when n upstreams agree', links: [`/confirmations/2/rpc/${first}`] },
    { method: 'POST', path: '/finalized/rpc/{chainId}', description: 'JSON-RPC with latest, safe and finalized pinned to the highest block n providers report as finalized (also under /confirmations/{n}/)', links: [`/finalized/rpc/${first}`] },
    { method: 'GET', path: '/chains', description: 'configured chains and the state of each upstream (URLs redacted)' },
    { method: 'GET', path: '/health', description: 'liveness: 200 while the process serves' },
    { method: 'GET', path: '/ready', description: 'readiness: 200, or 503 with the reasons (too few usable upstreams, database unreachable)' },
    { method: 'GET', path: '/metrics', description: 'Prometheus metrics' },
    { method: 'GET', path: '/collection.json', description: 'Postman collection of the JSON-RPC methods' },
  ];
  if (options.admin) routes.splice(0, routes.length, ...routes.filter((r) => r.path !== '/chains' && r.path !== '/metrics'));
  if (options.indexer) {
    routes.push(
      { method: 'GET', path: '/api-docs', description: 'indexer API reference (Redoc)' },
      { method: 'GET', path: '/openapi.json', description: 'indexer API, OpenAPI 3.1' },
      { method: 'GET', path: '/graphql', description: 'GraphQL endpoint (GraphiQL in a browser); POST for queries' },
      ...LIST_ROUTES.map((r): HomeRoute => ({ method: 'GET', path: r.paths[0]!, description: r.summary })),
      { method: 'GET', path: `${TRANSACTION_PATH_PREFIX}{id}`, description: 'one bridge transaction by its id' },
      { method: 'GET', path: '/api/stats', description: 'pending bridges per stage and chain pair: count and oldest age' },
      { method: 'GET', path: '/api/status', description: 'latest indexed block per chain and its age' },
    );
  }
  return {
    name: 'omnigate',
    description: options.indexer ? 'Verifying JSON-RPC balancer and bridge-event indexer API' : 'Verifying JSON-RPC balancer',
    chains,
    routes,
  };
}

/** The q-value the Accept header gives a media type (exact, then type/*, then *\/*). */
function quality(accept: string, type: string): number {
  let best = -1;
  let specificity = -1;
  for (const part of accept.split(',')) {
    const [range, ...params] = part.trim().toLowerCase().split(';');
    const q = Number(params.map((p) => p.trim()).find((p) => p.startsWith('q='))?.slice(2) ?? '1');
    const level = range === type ? 2 : range === `${type.split('/')[0]}/*` ? 1 : range === '*/*' ? 0 : -1;
    if (level > specificity) {
      specificity = level;
      best = Number.isFinite(q) ? q : 0;
    }
  }
  return best;
}

export function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const html = quality(accept, 'text/html');
  return html > 0 && html > quality(accept, 'application/json');
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function renderHtml(home: Home): string {
  const item = (r: HomeRoute) => {
    const main = r.method === 'GET' && !r.path.includes('{') ? `<a href="${escapeHtml(r.path)}">${escapeHtml(r.path)}</a>` : `<code>${escapeHtml(r.path)}</code>`;
    const links = r.method === 'GET' ? '' : (r.links ?? []).map((l) => ` <code>${escapeHtml(l)}</code>`).join('');
    return `<li><code>${r.method}</code> ${main} — ${escapeHtml(r.description)}${links}</li>`;
  };
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>omnigate</title></head>
<body><h1>omnigate</h1><p>${escapeHtml(home.description)}. Chains: ${home.chains.map(escapeHtml).join(', ') || 'none'}.</p>
<ul>
${home.routes.map(item).join('\n')}
</ul></body></html>
`;
}

export function homeRoute(options: { chains: readonly string[]; indexer: boolean; admin?: boolean }): Middleware {
  const home = buildHome(options);
  const json = `${JSON.stringify(home, null, 2)}\n`;
  const html = renderHtml(home);
  return function home(req, res, next) {
    const path = pathOf(req);
    if (path !== '/') return next();
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return next(new MethodNotAllowedError(`Method not allowed: ${req.method} / (use GET)`, { headers: { Allow: 'GET, HEAD' }, id: null }));
    }
    const asHtml = prefersHtml(req.headers.accept);
    const text = asHtml ? html : json;
    res.statusCode = 200;
    res.setHeader('Content-Type', asHtml ? 'text/html; charset=utf-8' : 'application/json');
    res.setHeader('Content-Length', Buffer.byteLength(text));
    res.setHeader('Vary', 'Accept');
    res.end(req.method === 'HEAD' ? undefined : text);
  };
}
