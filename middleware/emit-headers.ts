/**
 * Stage 7, emit headers. Writes the answer: the raw bytes of the first upstream of the agreeing
 * group and the seven headers (lib/pipeline/README.md "Response headers"). The only stage that writes the X-* headers of a
 * success (the error handler writes X-Request-Id on errors).
 * A batch (ctx.members) gets HTTP 200 and one array, one element per member that is not a
 * notification, in order; what the seven headers then say is in lib/pipeline/batch.ts. A batch of
 * notifications only gets 204 No Content with X-Request-Id. A client that has not taken its whole
 * answer `sendMs` after it was written is disconnected (lib/pipeline/answer-done.ts).
 * Reads: ctx.verdict or ctx.cached, ctx.confirmable, ctx.required, ctx.requestId (a batch: ctx.members),
 * ctx.budget (a key with a budget: X-Credits and what is left, middleware/budget.ts); with a
 * signer (`attest:`), a confirmed answer gets X-Attestation and X-Attestation-Key (lib/attest),
 * a batch one attestation per confirmed member.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { endAnswer } from '../lib/pipeline/answer-done.js';
import { asGatewayError, errorText } from '../lib/errors.js';
import type { Middleware } from '../lib/pipeline/compose.js';
import { answerOf, getContext, need, toppedUp } from '../lib/pipeline/context.js';
import { checkedUrlsValue, corsHeaders, Header, wantsCors } from '../lib/pipeline/headers.js';
import { confirmedBody } from '../lib/verify/answers/answers.js';
import type { MemberResult } from '../lib/pipeline/context.js';
import { batchAnswer } from '../lib/pipeline/batch.js';
import { pushCreditHeaders, type Charge } from '../lib/access/budget.js';
import { attestationMaxBytes, type Attester } from '../lib/attest/attester.js';

export interface EmitHeadersOptions {
  /**
   * Name upstreams by their redacted URL (key masked) in X-Checked-URLS and X-Forwarded-From;
   * false shows the raw URLs, keys included (an explicit opt-out: config `redactHeaders: false`).
   */
  redactHeaders: boolean;
  /**
   * Time a client has to take a whole answer once it is written, ms; then its connection is
   * closed (config `timeouts.sendMs`; absent or 0: no limit).
   */
  sendMs?: number;
  /** Signs confirmed answers (lib/attest, config `attest:`); absent: no attestation, no work. */
  attester?: Attester;
}

export function emitHeaders(options: EmitHeadersOptions): Middleware {
  // How an upstream is named: chosen once here, not a closure per request.
  const shown = options.redactHeaders ? shownLabel : shownUrl;
  return function emitHeaders(req, res) {
    const ctx = getContext(req);
    if (ctx.members) return emitBatch(req, res, ctx.members, ctx.requestId, shown, options.sendMs, ctx.budget, options.attester);
    const verdict = answerOf(ctx) ?? need(ctx, 'verdict', 'emitHeaders');
    // Confirmed: a confirmable request whose answer N agreed on (not a relayed refusal).
    const confirmed = need(ctx, 'confirmable', 'emitHeaders') && !verdict.unconfirmed;
    const forwarded = verdict.members[0]!;
    // its bytes, less any ignored field the N agreeing answers did not all carry alike
    const body = confirmedBody(verdict.members, need(ctx, 'payload', 'emitHeaders'));
    // One writeHead with a flat list: Node's fast path when no header was set before (a host app's
    // own setHeader calls are merged in, as Node documents).
    const headers = [
      'Content-Type', 'application/json',
      'Content-Length', String(body.length),
      Header.CheckedUrls, checkedUrlsValue(ctx.writtenTo ? ctx.writtenTo.map(shown) : memberNames(verdict.members, shown)),
      Header.Confirmable, String(confirmed),
      Header.ForwardedFrom, shown(forwarded.upstream),
      Header.JsonHash, verdict.hash,
      Header.RequestId, ctx.requestId,
      Header.RequiredConfirmations, confirmed ? String(need(ctx, 'required', 'emitHeaders')) : '1',
      Header.VerifiedBy, ctx.proof !== undefined ? ctx.proof.verifiedBy : confirmed ? 'agreement' : 'none',
    ];
    // A proven answer names the header it was proven against (lib/prove).
    if (ctx.proof !== undefined) headers.push(Header.BlockHash, ctx.proof.headerHash);
    // A request the cache looked up: X-Cache, and for a hit the standard Age (seconds since it was
    // confirmed); TOPUP: an entry confirmed by fewer than N, brought to N by the missing votes.
    const cached = ctx.cached;
    if (cached !== undefined) {
      if (cached.hit) headers.push(Header.Cache, 'HIT', 'Age', String(Math.max(0, Math.floor((Date.now() - cached.at) / 1000))));
      else headers.push(Header.Cache, toppedUp(cached, ctx.verdict) ? 'TOPUP' : 'MISS');
    }
    // A key with a budget (middleware/budget.ts settled it): what the answer cost and what is left.
    if (ctx.budget !== undefined) pushCreditHeaders(headers, ctx.budget);
    const attester = options.attester;
    if (attester !== undefined && confirmed) {
      const attestation = attester.attest(ctx, verdict, null);
      if (attestation !== undefined) headers.push(Header.Attestation, attestation, Header.AttestationKey, attester.keyId);
    }
    res.writeHead(200, wantsCors(req) ? [...corsHeaders, ...headers] : headers);
    endAnswer(res, body, options.sendMs);
  };
}

type Named = { url: string; label: string };
const shownLabel = (u: Named): string => u.label;
const shownUrl = (u: Named): string => u.url;

/** The names of the upstreams whose answers agreed, in order. */
function memberNames(members: readonly { upstream: Named }[], shown: (u: Named) => string): string[] {
  const names = new Array<string>(members.length);
  for (let i = 0; i < members.length; i++) names[i] = shown(members[i]!.upstream);
  return names;
}

function emitBatch(
  req: IncomingMessage,
  res: ServerResponse,
  members: readonly MemberResult[],
  requestId: string,
  shown: (u: { url: string; label: string }) => string,
  sendMs: number | undefined,
  charge: Charge | undefined,
  attester: Attester | undefined,
): void {
  const answer = batchAnswer(members, errorText, (error, ctx) => {
    const err = asGatewayError(error, ctx?.log ?? getContext(req).log);
    if (ctx) ctx.errorCode = err.code;
    return err;
  }, shown);
  const cors = wantsCors(req) ? corsHeaders : [];
  if (!answer.body) {
    // Notifications only: JSON-RPC 2.0 returns nothing at all.
    const head = [...cors, Header.RequestId, requestId];
    if (charge !== undefined) pushCreditHeaders(head, charge);
    res.writeHead(204, head);
    return void res.end();
  }
  const head = [
    ...cors,
    'Content-Type', 'application/json',
    'Content-Length', String(answer.body.length),
    Header.CheckedUrls, answer.checked.length > 0 ? checkedUrlsValue(answer.checked) : '',
    Header.Confirmable, String(answer.confirmable),
    Header.ForwardedFrom, checkedUrlsValue(answer.forwarded),
    Header.JsonHash, answer.hash,
    Header.RequestId, requestId,
    Header.RequiredConfirmations, String(answer.required),
    Header.VerifiedBy, !answer.confirmable ? 'none' : members.every((m) => m.kind !== 'answer' || m.ctx.proof !== undefined) ? 'proof' : 'agreement',
  ];
  if (charge !== undefined) pushCreditHeaders(head, charge);
  if (attester !== undefined) {
    const attestations = memberAttestations(members, attester);
    if (attestations !== '') head.push(Header.Attestation, attestations, Header.AttestationKey, attester.keyId);
  }
  res.writeHead(200, head);
  endAnswer(res, answer.body, sendMs);
}

/**
 * A batch's X-Attestation: one attestation per member answered and confirmed (its index in the
 * answer array in its statement), comma-separated in order, as many as fit in
 * attestationMaxBytes; '' when none.
 */
function memberAttestations(members: readonly MemberResult[], attester: Attester): string {
  let out = '';
  let index = 0;
  for (const m of members) {
    if (m.kind === 'notification') continue;
    const at = index++;
    if (m.kind !== 'answer') continue;
    const verdict = answerOf(m.ctx);
    if (!verdict || !m.ctx.confirmable || verdict.unconfirmed || verdict.members.length < (m.ctx.required ?? 1)) continue;
    const attestation = attester.attest(m.ctx, verdict, at);
    if (attestation === undefined) continue;
    if (out.length + 1 + attestation.length > attestationMaxBytes) break;
    out = out === '' ? attestation : `${out},${attestation}`;
  }
  return out;
}
