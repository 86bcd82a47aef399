// Issue 36: "a CLI reference generated from the commands' own help". docs/operations/cli.md holds, between
// its markers, every command's `--help` as `npm run docs:cli` writes it; a command, option or description
// changed without running the script makes this test fail, naming the script to run. And "each command
// group's help has one example": every group `signet --help` lists ends its help with one.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { CLI_PAGE, generateReference, subcommands, withReference } from '../../scripts/docs-cli.ts';

const reference = generateReference();

test('docs/operations/cli.md is what `npm run docs:cli` generates from the commands\' --help (stale: run the script)', async () => {
  const page = readFileSync(CLI_PAGE, 'utf8');
  const expected = withReference(page, await reference);
  assert.ok(expected === page, 'docs/operations/cli.md is stale: a command\'s --help changed; run `npm run docs:cli` and commit docs/operations/cli.md');
});

test('`signet --help` names both halves, and every command it lists shows an example in its own help', async () => {
  const sections = (await reference).split(/^### /m).filter(Boolean);
  const top = sections[0] ?? '';
  assert.match(top, /sign-in\s+provider/);
  assert.match(top, /PDF\s+parsing\s+and\s+translation/);
  const commands = subcommands(top.slice(top.indexOf('```text')));
  assert.ok(commands.length >= 9, `signet --help lists ${commands.join(', ')}`);
  for (const command of commands) {
    const own = sections.find((s) => s.startsWith(`\`signet ${command}\``)) ?? '';
    assert.match(own, /\nExamples?:\n {2}\$ \S/, `signet ${command} --help shows no example`);
  }
});

test('the generator finds subcommands in commander\'s layout, wrapped descriptions and the help entry left out', () => {
  const help = 'Usage: x\n\nCommands:\n  create [options]   make one\n                     more text\n  list               all\n  help [command]     display help\n\nExample:\n  $ x';
  assert.deepEqual(subcommands(help), ['create', 'list']);
  assert.deepEqual(subcommands('Usage: x\n\nOptions:\n  -h'), []);
});
