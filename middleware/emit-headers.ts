/**
 * Stage 7, emit headers. Writes the answer: the raw bytes of the first upstream of the agreeing
 * group and the seven headers of spec 2.4. The only stage that writes the X-* headers of a
 * success (the error handler writes X-Request-Id on errors).
 * Reads: ctx.verdict, ctx.confirmable, ctx.required, ctx.requestId
 */
import type { Middleware } from '../lib/compose.js';
import { getContext, need } from '../lib/context.js';
import { checkedUrlsValue, corsHeaders, Header, wantsCors } from '../lib/headers.js';
import { confirmedBody } from '../lib/verify/answers.js';

export interface EmitHeadersOptions {
  /**
   * Name upstreams by their redacted URL (key masked) in X-Checked-URLS and X-Forwarded-From;
   * false shows the raw URLs, keys included (an explicit opt-out: config `redactHeaders: false`).
   */
  redactHeaders: boolean;
}

export function emitHeaders(options: EmitHeadersOptions): Middleware {
  return function emitHeaders(req, res) {
    const ctx = getContext(req);
    const verdict = need(ctx, 'verdict', 'emitHeaders');
    const shown = (u: { url: string; label: string }) => (options.redactHeaders ? u.label : u.url);
    const forwarded = verdict.members[0]!;
    // its bytes, less any ignored field the N agreeing answers did not all carry alike
    const body = confirmedBody(verdict.members, need(ctx, 'payload', 'emitHeaders'));
    // One writeHead with a flat list: Node's fast path when no header was set before (a host app's
    // own setHeader calls are merged in, as Node documents).
    const headers = [
      'Content-Type', 'application/json',
      'Content-Length', String(body.length),
      Header.CheckedUrls, checkedUrlsValue(ctx.writtenTo ? ctx.writtenTo.map(shown) : verdict.members.map((m) => shown(m.upstream))),
      Header.Confirmable, String(need(ctx, 'confirmable', 'emitHeaders')),
      Header.ForwardedFrom, shown(forwarded.upstream),
      Header.JsonHash, verdict.hash,
      Header.RequestId, ctx.requestId,
      Header.RequiredConfirmations, String(need(ctx, 'required', 'emitHeaders')),
    ];
    res.writeHead(200, wantsCors(req) ? [...corsHeaders, ...headers] : headers);
    res.end(body);
  };
}
