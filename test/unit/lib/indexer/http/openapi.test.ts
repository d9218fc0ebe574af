import test from 'ava';
import { buildOpenApi } from '../../../../../lib/indexer/http/openapi.js';

function refs(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => refs(v, found));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') found.push(v);
      else refs(v, found);
    }
  }
  return found;
}

test('every $ref resolves', (t) => {
  const doc = buildOpenApi();
  for (const ref of refs(doc)) {
    const target = ref.replace(/^#\//, '').split('/').reduce<unknown>((o, k) => (o as Record<string, unknown>)?.[k], doc);
    t.truthy(target, ref);
  }
});

test('limits and the server URL are taken from the options', (t) => {
  const doc = buildOpenApi({ serverUrl: '/indexer', limits: { defaultLimit: 20, maxLimit: 200 } }) as any;
  t.deepEqual(doc.servers, [{ url: '/indexer' }]);
  t.is(doc.components.parameters.limit.schema.maximum, 200);
  t.is(doc.components.parameters.limit.schema.default, 20);
  t.regex(doc.components.parameters.limit.description, /1 to 200; default 20/);
});
