// How `signet parse` puts one file's results in place (src/cli/parse-output.ts): staged, then renamed.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { stageResults } from '../../src/cli/parse-output.ts';

const root = mkdtempSync(path.join(tmpdir(), 'signet-parse-output-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const folder = () => path.join(root, String((n += 1)));

const png = (text: string) => new Uint8Array(Buffer.from(text));

describe('signet parse results: staged in the output folder, renamed into place when the file is done', () => {
  test('nothing is created before the first write, and discarding then leaves nothing', async () => {
    const out = path.join(folder(), 'new', 'deeper');
    const staged = stageResults(out, 'paper');
    await staged.discard();
    assert.ok(!existsSync(path.dirname(path.dirname(out))));
  });

  test('until commit nothing is in place; a discarded file removes its staging folder and the output folders it created, which were empty', async () => {
    const base = folder();
    mkdirSync(base);
    const out = path.join(base, 'new', 'deeper');
    const staged = stageResults(out, 'paper');
    await staged.writePicture('pictures/page-1-1.png', png('one'));
    assert.deepEqual(readdirSync(out).length, 1, 'one staging folder');
    assert.match(readdirSync(out)[0]!, /^\.paper\.signet-parse-/);
    assert.ok(!existsSync(path.join(out, 'paper')));
    await staged.discard();
    assert.deepEqual(readdirSync(base), [], 'new/deeper were created for this file and are removed with it');
  });

  test('a discarded file keeps an output folder that existed before, and what is in it', async () => {
    const out = folder();
    mkdirSync(out);
    writeFileSync(path.join(out, 'earlier.md'), 'kept');
    const staged = stageResults(out, 'paper');
    await staged.writeFile('paper.md', 'new');
    await staged.discard();
    assert.deepEqual(readdirSync(out), ['earlier.md']);
  });

  test('commit moves NAME.md, NAME.json and NAME/pictures/ into place and returns their paths', async () => {
    const out = folder();
    const staged = stageResults(out, 'paper');
    await staged.writePicture('pictures/page-1-1.png', png('one'));
    await staged.writePicture('pictures/page-2-1.png', png('two'));
    await staged.writeFile('paper.md', '![](paper/pictures/page-1-1.png)');
    await staged.writeFile('paper.json', '{}');
    const written = await staged.commit();
    assert.deepEqual(written, {
      outputs: [path.join(out, 'paper.md'), path.join(out, 'paper.json')],
      pictures: [path.join(out, 'paper/pictures/page-1-1.png'), path.join(out, 'paper/pictures/page-2-1.png')],
    });
    assert.deepEqual(readdirSync(out).sort(), ['paper', 'paper.json', 'paper.md'], 'no staging folder left');
    assert.equal(readFileSync(path.join(out, 'paper/pictures/page-2-1.png'), 'utf8'), 'two');
    await staged.discard();
    assert.ok(existsSync(path.join(out, 'paper.md')), 'discard after commit removes nothing');
  });

  test('a rerun replaces the earlier results: pictures it did not cut again are removed, files that are not its pictures are kept', async () => {
    const out = folder();
    const first = stageResults(out, 'paper');
    for (const name of ['page-1-1.png', 'page-1-2.png', 'page-3-1.png']) await first.writePicture(`pictures/${name}`, png('old'));
    await first.writeFile('paper.md', 'old');
    await first.commit();
    writeFileSync(path.join(out, 'paper/pictures/my-notes.txt'), 'mine');

    const second = stageResults(out, 'paper');
    await second.writePicture('pictures/page-1-1.png', png('new'));
    await second.writeFile('paper.md', 'new');
    await second.commit();
    assert.deepEqual(readdirSync(path.join(out, 'paper/pictures')).sort(), ['my-notes.txt', 'page-1-1.png']);
    assert.equal(readFileSync(path.join(out, 'paper/pictures/page-1-1.png'), 'utf8'), 'new');
    assert.equal(readFileSync(path.join(out, 'paper.md'), 'utf8'), 'new');
  });

  test('a rerun without pictures removes the earlier ones and the emptied NAME/pictures and NAME folders', async () => {
    const out = folder();
    const first = stageResults(out, 'paper');
    await first.writePicture('pictures/page-1-1.png', png('old'));
    await first.writeFile('paper.md', 'old');
    await first.commit();
    const second = stageResults(out, 'paper');
    await second.writeFile('paper.md', 'new');
    await second.commit();
    assert.deepEqual(readdirSync(out), ['paper.md']);
  });
});
