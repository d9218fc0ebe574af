/** The `omnigate chainlist` entry: its pure parts are the modules' own, and the package entry re-exports the ones it documents. */
import test from 'ava';
import * as chainlist from '../../../../lib/chainlist/index.js';
import * as clean from '../../../../lib/chainlist/clean.js';
import * as config from '../../../../lib/chainlist/config.js';
import * as source from '../../../../lib/chainlist/source.js';
import * as omnigate from '../../../../lib/index.js';

test('should re-export the cleaning, config and source functions as they are', (t) => {
  const expected = { ...pick(clean, ['chainIdOf', 'classifyUrl', 'cleanChainlist', 'compareIds', 'dropReasons', 'isPrivateHost']), ...pick(config, ['toConfig', 'toYaml']), ...pick(source, ['defaultSource', 'ethChainlistVersion', 'fileSource', 'loadChainlist', 'parseChainlistJson']) };
  t.deepEqual(Object.keys(chainlist).sort(), Object.keys(expected).sort());
  for (const [name, value] of Object.entries(expected)) t.is((chainlist as Record<string, unknown>)[name], value, name);
});

test('the package entry should export the chainlist functions it names, the same ones', (t) => {
  for (const name of ['cleanChainlist', 'toConfig', 'toYaml', 'loadChainlist', 'fileSource', 'defaultSource', 'classifyUrl'] as const) t.is(omnigate[name], chainlist[name], name);
});

function pick(module: object, names: string[]): Record<string, unknown> {
  return Object.fromEntries(names.map((n) => [n, (module as Record<string, unknown>)[n]]));
}
