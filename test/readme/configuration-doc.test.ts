// Issue 36: "configuration (every setting, … checked against [the settings module] by a test)". Each
// variable the settings schema in src/config/settings.ts reads must have a row in docs/configuration.md's
// tables, and every variable a row names must be one the schema reads — so a setting added on any
// branch fails here, by name, until it is documented.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { SETTING_NAMES } from '../../src/config/settings.ts';
import { ROOT } from './markdown.ts';

/** The variables named in the first column of the page's table rows (`A` / `B` rows name both). */
export function documentedSettings(markdown: string): Set<string> {
  const names = new Set<string>();
  for (const line of markdown.split('\n')) {
    const first = /^\|([^|]*)\|/.exec(line)?.[1];
    if (first === undefined) continue;
    for (const m of first.matchAll(/`(SIGNET_[A-Z0-9_]+)`/g)) names.add(m[1] ?? '');
  }
  return names;
}

const page = readFileSync(path.join(ROOT, 'docs/configuration.md'), 'utf8');
const documented = documentedSettings(page);

test('every setting the settings schema reads has a row in docs/configuration.md', () => {
  assert.ok(SETTING_NAMES.length >= 30, `the schema reads ${SETTING_NAMES.length} settings`);
  const missing = SETTING_NAMES.filter((name) => !documented.has(name));
  assert.deepEqual(
    missing,
    [],
    missing.map((name) => `docs/configuration.md does not describe ${name}, a setting of src/config/settings.ts: add a row "| \`${name}\` | default | meaning |" to its table`).join('\n'),
  );
});

test('every variable docs/configuration.md describes is one the settings schema reads', () => {
  const unknown = [...documented].filter((name) => !SETTING_NAMES.includes(name));
  assert.deepEqual(unknown, [], unknown.map((name) => `docs/configuration.md describes ${name}, which src/config/settings.ts does not read: remove the row or add the setting`).join('\n'));
});

test('the check reads a row naming two variables, and ignores variables outside the first column', () => {
  const names = documentedSettings('| `SIGNET_HOST` / `SIGNET_PORT` | x | see `SIGNET_OTHER` |\n| a | `SIGNET_NOT_A_ROW` |');
  assert.deepEqual([...names].sort(), ['SIGNET_HOST', 'SIGNET_PORT']);
});
