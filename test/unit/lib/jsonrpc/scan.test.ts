import test from 'ava';
import fc from 'fast-check';
import { arrayElements, costScanFrom, elementsOver, deeperAfter, judgingCost, nestsDeeperThan, newScan, scanJson, scanUpTo } from '../../../../lib/jsonrpc/scan.js';

const scan = (text: string) => scanJson(Buffer.from(text), { ids: true });
const idTexts = (text: string) => scan(text).ids.map((s) => s.text);

test('should measure the nesting depth outside strings', (t) => {
  t.is(scan('5').depth, 0);
  t.is(scan('{"a":[1,{"b":[]}]}').depth, 4);
  t.is(scan('["[[[[", "\\"[[["]').depth, 1, 'brackets inside strings, escaped quotes');
  t.is(scan('["\\\\", [[1]]]').depth, 3, 'an escaped backslash ends before the quote');
  t.true(nestsDeeperThan(Buffer.from(`${'['.repeat(300)}${']'.repeat(300)}`), 256));
  t.false(nestsDeeperThan(Buffer.from(`${'['.repeat(256)}${']'.repeat(256)}`), 256));
});

test('should find the id of a single answer and of each batch member, and only those', (t) => {
  t.deepEqual(idTexts('{"jsonrpc":"2.0","result":{"id":9},"id":57}'), ['57']);
  t.deepEqual(idTexts('[{"id":1,"result":[{"id":2}]}, {"result":null,"id":"x"}]'), ['1', '"x"']);
  t.deepEqual(idTexts('{ "id" : null , "error" : {} }'), ['null']);
  t.deepEqual(idTexts('{"\\u0069d":3}'), ['3'], 'an escaped key is still "id"');
  t.deepEqual(idTexts('{"id":{"a":1}}'), [undefined], 'an object id has no text');
  t.deepEqual(idTexts('{"result":"0x1"}'), []);
  t.deepEqual(idTexts('[[{"id":1}]]'), [], 'not a member of the top array');
});

test('should give the exact byte range of each id, for splicing', (t) => {
  const text = '{"id":12,"result":12345678901234567890}';
  const [span] = scan(text).ids;
  t.is(text.slice(span!.start, span!.end), '12');
  t.is(`${text.slice(0, span!.start)}"c"${text.slice(span!.end)}`, '{"id":"c","result":12345678901234567890}');
});

test('should say when the bytes are cut short, and what the top value is', (t) => {
  t.true(scan('{"id":1,"result":"0x').truncated);
  t.true(scan('[[1]').truncated);
  t.false(scan('[1]').truncated);
  t.is(scan(' {"a":1}').kind, 'object');
  t.is(scan('[]').kind, 'array');
  t.is(scan('<html>').kind, 'other');
});

test('arrayElements gives each top-level array element its byte range, whitespace cut, strings and nesting skipped', (t) => {
  const text = ' [ {"a":"x,]}"} ,5,\n[1,[2]] , "s\\"]" ,{"id":1}]';
  const buf = Buffer.from(text);
  const spans = arrayElements(buf);
  const parts: string[] = [];
  for (let i = 0; i < spans.length; i += 2) parts.push(buf.toString('utf8', spans[i], spans[i + 1]));
  t.deepEqual(parts, ['{"a":"x,]}"}', '5', '[1,[2]]', '"s\\"]"', '{"id":1}']);
  t.deepEqual(arrayElements(Buffer.from('{"a":1}')), []);
  t.deepEqual(arrayElements(Buffer.from('[]')), []);
});

test('nestsDeeperThan is scanJson\'s depth test exactly, on any bytes (cut short, unbalanced, escaped quotes)', (t) => {
  const piece = fc.constantFrom('[', ']', '{', '}', '"', '\\"', '\\', ':', ',', 'a', ' ', '"x"', '"[["', '1', '\\\\"');
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 60 }), fc.integer({ min: -1, max: 6 }), (pieces, limit) => {
      const buf = Buffer.from(pieces.join(''));
      return nestsDeeperThan(buf, limit) === scanJson(buf, { stopAbove: limit }).depth > limit;
    }),
    { numRuns: 5000 },
  );
  t.pass();
});

test('deeperAfter, fed the bytes in chunks cut anywhere (inside strings, between a backslash and what it escapes), ends where nestsDeeperThan does', (t) => {
  const piece = fc.constantFrom('[', ']', '{', '}', '"', '\\"', '\\', ':', ',', 'a', ' ', '"x"', '"[["', '1', '\\\\"', '"\\\\"', '"\\\\\\""');
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 60 }), fc.integer({ min: 0, max: 6 }), fc.array(fc.nat(), { maxLength: 8 }), (pieces, limit, cuts) => {
      const buf = Buffer.from(pieces.join(''));
      const at = [...new Set(cuts.map((c) => c % (buf.length + 1)))].sort((a, b) => a - b);
      const state = { nestDepth: 0, nestMode: 0 };
      let deeper = false;
      let from = 0;
      for (const to of [...at, buf.length]) {
        deeper = deeperAfter(state, buf.subarray(from, to), limit);
        from = to;
      }
      return deeper === nestsDeeperThan(buf, limit);
    }),
    { numRuns: 5000 },
  );
  const byByte = (text: string, limit: number) => {
    const state = { nestDepth: 0, nestMode: 0 };
    let deeper = false;
    for (const b of Buffer.from(text)) deeper = deeperAfter(state, Buffer.from([b]), limit);
    return deeper;
  };
  t.true(byByte('{"a":"\\\\"}[[[', 2)); // the string closes after an escaped backslash
  t.false(byByte('{"a":"\\"[[["}', 2)); // an escaped quote does not close it
  t.true(byByte(`${'['.repeat(300)}${']'.repeat(300)}`, 256));
  t.false(byByte(`${'['.repeat(256)}${']'.repeat(256)}`, 256));
});

test('scanUpTo, a slice at a time however the slices are cut, gives scanJson\'s result exactly (ids, spans, depth, cut short)', (t) => {
  const piece = fc.constantFrom('[', ']', '{', '}', '"', '\\"', '\\', ':', ',', 'a', ' ', '"x"', '"id"', '"i\\u0064"', '"id":7', '"id" : "q\\"r"', '"id":{', '"id":[', '"[["', '1', '\\\\"', '"\\\\"');
  fc.assert(
    fc.property(fc.array(piece, { maxLength: 60 }), fc.integer({ min: 1, max: 9 }), fc.boolean(), fc.integer({ min: 0, max: 5 }), (pieces, slice, ids, limit) => {
      const buf = Buffer.from(pieces.join(''));
      const stopAbove = ids ? Infinity : limit;
      const state = newScan();
      let sliced = scanUpTo(buf, state, slice, ids, stopAbove);
      for (let rounds = 0; sliced === undefined; rounds++) {
        if (rounds > buf.length) return false; // it must get on
        sliced = scanUpTo(buf, state, state.at + slice, ids, stopAbove);
      }
      t.deepEqual(sliced, scanJson(buf, ids ? { ids: true } : { stopAbove: limit }));
      return true;
    }),
    { numRuns: 5000 },
  );
  // A whole answer cut into 1-byte slices: the id after a long result is found where it is.
  const text = `{"jsonrpc":"2.0","result":[${'{"id":"0x1","data":"0x\\"}"},'.repeat(50)}1],"id":"client"}`;
  const state = newScan();
  let scan = scanUpTo(Buffer.from(text), state, 1, true, Infinity);
  let slices = 1;
  while (scan === undefined) {
    scan = scanUpTo(Buffer.from(text), state, state.at + 1, true, Infinity);
    slices++;
  }
  t.true(slices > 100, `${slices} slices`);
  t.deepEqual(scan.ids.map((s) => text.slice(s.start, s.end)), ['"client"']);
});

test('elementsOver should count the first level of an array only, and stop once past the limit', (t) => {
  const over = (text: string, limit: number) => elementsOver(Buffer.from(text), limit);
  t.false(over('[1,2,3]', 3));
  t.true(over('[1,2,3,4]', 3));
  t.false(over(' [ {"a":[1,2,3,4,5]} , "x,y,z,w" , [6,7,8,9] ] ', 3));
  t.true(over('[{"a":1},{"b":2},{"c":"x\\",y"},{"d":4}]', 3));
  t.false(over('[{"a":1},{"b":2},{"c":"x\\",y,z,w"}]', 3), 'a comma in a string with an escaped quote is not counted');
  t.false(over('{"a":1,"b":2,"c":3,"d":4}', 3), 'an object is no batch');
  t.false(over('"[1,2,3,4]"', 3));
  t.false(over('', 3));
  // it stops early: what follows the limit is not read (a body cut there is over it as well)
  t.true(over(`[${'1,'.repeat(5)}`, 3));
  t.false(over(`${'['.repeat(100_000)}1,2`, 1), 'deep nesting costs no recursion');
});

test('judgingCost: the bytes, plus what costs more than its bytes to judge', (t) => {
  const cost = (text: string) => judgingCost(Buffer.from(text));
  t.is(cost('"0xabcdef"'), 10, 'a string: its bytes');
  t.is(cost('[1,2]'), 5 + 30 + 10, 'an array and a value');
  t.is(cost('{"a":1}'), 7 + 30 + 20, 'an object and a member');
  t.is(cost('[1.0]'), 5 + 30 + 90, 'a number spelled inexactly');
  t.is(cost('[1e2,-1E2,1234567890123456]'), 27 + 30 + 20 + 3 * 90, 'exponents and 16 digits');
  t.is(cost('[123456789012345]'), 17 + 30, '15 digits are exact');
  t.is(cost('"\\u0000\\n\\\\"'), 12 + 10 + 2 + 2, 'escapes: \\u 10, others 2; an escaped backslash is one escape');
  t.is(cost('["a:1.0,{[","b"]'), 16 + 30 + 10, 'nothing inside a string but its escapes');
  // Past the 64th member of one object, each member costs 200; members of nested objects count for their own.
  const wide = `{${Array.from({ length: 100 }, (_, i) => `"k${i}":{"a":0}`).join(',')}}`;
  t.is(cost(wide), wide.length + 30 + 64 * 20 + 36 * 200 + 99 * 10 + 100 * (30 + 20));
  // Escapes counted in a string after many strings without one; a string left open ends the scan.
  t.is(cost(`["x","y","\\u0001"]`), 18 + 30 + 2 * 10 + 10);
  t.is(cost('["\\u0001'), 8 + 30 + 10);
  t.is(cost('{"a'), 3 + 30);
});

test('judgingCost stops counting once the cost reaches stopAt', (t) => {
  const body = Buffer.from(`[${'{},'.repeat(100_000)}{}]`);
  const full = judgingCost(body);
  t.is(full, body.length + 30 + 100_001 * 30 + 100_000 * 10);
  const stopped = judgingCost(body, 1_000_000);
  t.true(stopped >= 1_000_000 && stopped < 1_000_100, String(stopped));
});

test('judgingCost: nothing shorter than costScanFrom reaches 2 MiB units, whatever its bytes', (t) => {
  // The densest bytes: members of one object past the 64th (`"a":1,` ≈ 26 units a byte), objects and values, \\u escapes.
  const n = costScanFrom;
  const keys = `{${Array.from({ length: n / 8 }, (_, i) => `"${i.toString(36)}":1`).join(',')}}`.slice(0, n);
  for (const text of [keys, '[{},'.repeat(n / 4).slice(0, n), `"${'\\u0000'.repeat(n / 6)}"`.slice(0, n), `[${'1.0,'.repeat(n / 4)}`.slice(0, n)]) {
    t.true(judgingCost(Buffer.from(text)) < 2 * 1024 * 1024, text.slice(0, 20));
  }
});
