/**
 * The JSON-RPC codes omnigate answers with: distinct, in JSON-RPC's reserved ranges, clear of the
 * codes nodes use (-32000, -32005), and each one in the error table of lib/pipeline/README.md
 * with the HTTP status its error class sends.
 */
import { readFileSync } from 'node:fs';
import test from 'ava';
import * as errors from '../../../../lib/errors.js';
import { RpcCode } from '../../../../lib/jsonrpc/codes.js';
import { fromRoot } from '../../../support/paths.js';

const codes = Object.values(RpcCode);

test('should give every error its own code, in JSON-RPC\'s ranges, clear of the nodes\' -32000 and -32005', (t) => {
  t.is(new Set(codes).size, codes.length);
  for (const code of codes) t.true((code >= -32700 && code <= -32600) || (code >= -32099 && code <= -32001), String(code));
  t.false(codes.includes(-32000 as never));
  t.false(codes.includes(-32005 as never));
  t.is(RpcCode.ParseError, -32700);
  t.is(RpcCode.InvalidRequest, -32600);
  t.is(RpcCode.InternalError, -32603);
});

/** The rows of the error table: code → the HTTP statuses it lists. */
function documented(): Map<number, string> {
  const readme = readFileSync(fromRoot('lib/pipeline/README.md'), 'utf8');
  const rows = new Map<number, string>();
  for (const m of readme.matchAll(/^\| (-32\d{3}) \| ([\d, ]+) \|/gm)) rows.set(Number(m[1]), `${rows.get(Number(m[1])) ?? ''} ${m[2]}`.trim());
  return rows;
}

test('should document every code in the error table, and no other', (t) => {
  t.deepEqual([...documented().keys()].sort(), [...codes].sort());
});

test('each error class should send the code and a status its table row lists', (t) => {
  const table = documented();
  const classes = Object.values(errors).filter((e): e is new (m: string) => errors.GatewayError => typeof e === 'function' && e.prototype instanceof errors.GatewayError);
  t.true(classes.length >= codes.length - 1);
  for (const ErrorClass of classes) {
    const err = new ErrorClass('x');
    t.true(codes.includes(err.rpcCode as never), ErrorClass.name);
    t.true((table.get(err.rpcCode) ?? '').split(/[ ,]+/).includes(String(err.status)), `${ErrorClass.name}: ${err.rpcCode} ${err.status}`);
  }
});

/** The rows of the README's "Errors at a glance": code → every HTTP status it lists (`400 (415)` → 400 and 415). */
function atAGlance(): Map<number, string> {
  const readme = readFileSync(fromRoot('README.md'), 'utf8');
  const rows = new Map<number, string>();
  for (const m of readme.matchAll(/^\| (-32\d{3}) \| ([\d,() ]+) \|/gm)) rows.set(Number(m[1]), m[2]!);
  return rows;
}

/** The distinct statuses of a table cell, sorted. */
const statuses = (cell: string | undefined): string[] => [...new Set((cell ?? '').match(/\d{3}/g) ?? [])].sort();

test('the README\'s error table should list every code with the statuses the error reference lists', (t) => {
  const glance = atAGlance();
  const reference = documented();
  t.deepEqual([...glance.keys()].sort(), [...reference.keys()].sort());
  for (const [code, cell] of reference) t.deepEqual(statuses(glance.get(code)), statuses(cell), String(code));
});
