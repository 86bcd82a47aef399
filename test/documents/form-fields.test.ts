// Issue 41, item 5: "form fields (AcroForm widgets and their labels) as docling's key_value_items/form
// items" and as "Label: value" in the Markdown — on a real fillable form: pdf-lib's createForm example,
// filled (bench/docparse/public/pages/pdf-lib-create-form.pdf, from Hopding/pdf-lib
// assets/pdfs/examples/create_form.pdf). Its answers are in the widgets only, never in the page's text.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import { runDocparse } from '../../src/documents/parse.ts';
import { killSpareReader } from '../../src/documents/pdf/reader-client.ts';

const pdf = readFileSync(new URL('../../bench/docparse/public/pages/pdf-lib-create-form.pdf', import.meta.url));
const parsed = runDocparse(pdf, { name: 'create-form', ocrMode: 'off' });

after(() => killSpareReader());

describe('form fields (AcroForm widgets and their labels) as key_value_items and "Label: value"', () => {
  test('each field is given the label printed to its left or above it, a check box the words to its right, a radio group the line above it', async () => {
    const { document } = await parsed;
    const fields = (document.pages[0]?.fields ?? []).map((f) => [f.type, f.key, f.value]);
    assert.deepEqual(fields, [
      ['text', 'Enter your favorite superhero', 'One Punch Man'],
      ['radio', 'Select your favorite rocket', 'Saturn IV'],
      ['checkbox', 'Exia', 'Yes'],
      ['checkbox', 'Virtue', 'Off'],
      ['checkbox', 'Kyrios', 'Off'],
      ['checkbox', 'Dynames', 'Yes'],
      ['combobox', 'Select your favorite planet*', 'Pluto'],
      ['listbox', 'Select your favorite person', 'Ada Lovelace'],
    ]);
  });

  test('the Markdown says each filled field as "Label: value" where its label is printed (once); an unchecked box says nothing', async () => {
    const { markdown } = await parsed;
    assert.ok(!markdown.split('\n').includes('Enter your favorite superhero:'), 'the label line itself carries the value');
    assert.equal(markdown.split('One Punch Man').length, 2);
    for (const line of ['Enter your favorite superhero: One Punch Man', 'Select your favorite rocket: Saturn IV', 'Exia: Yes', 'Dynames: Yes', 'Select your favorite planet*: Pluto', 'Select your favorite person: Ada Lovelace']) {
      assert.ok(markdown.split('\n').includes(line), `${line} in:\n${markdown}`);
    }
    assert.ok(!markdown.includes('Virtue: Off'));
  });

  test("the JSON has one docling key_value_region per field, its graph's key cell linked to_value to its value cell", async () => {
    const json = JSON.parse((await parsed).json) as { key_value_items: Array<{ self_ref: string; label: string; graph: { cells: Array<{ label: string; cell_id: number; text: string }>; links: Array<{ label: string; source_cell_id: number; target_cell_id: number }> } }>; body: { children: Array<{ $ref: string }> } };
    assert.equal(json.key_value_items.length, 8);
    const first = json.key_value_items[0];
    assert.equal(first?.label, 'key_value_region');
    assert.deepEqual(first?.graph.cells.map((c) => [c.label, c.cell_id, c.text]), [['key', 0, 'Enter your favorite superhero'], ['value', 1, 'One Punch Man']]);
    assert.deepEqual(first?.graph.links, [{ label: 'to_value', source_cell_id: 0, target_cell_id: 1 }]);
    assert.ok(json.body.children.some((ref) => ref.$ref === first?.self_ref));
  });

  test('a PDF without a form has no fields and no key_value_items', async () => {
    const plain = readFileSync(new URL('../../bench/docparse/public/docling/2305.03393v1-pg9.pdf', import.meta.url));
    const result = await runDocparse(plain, { name: 'plain', ocrMode: 'off' });
    assert.equal(result.document.pages[0]?.fields, undefined);
    assert.deepEqual(JSON.parse(result.json).key_value_items, []);
  });
});
