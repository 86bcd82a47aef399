// Issue 41's second pass on tables, scored against docling's own truth: each rule on the real page
// of the public corpus (bench/docparse/public/) where the two truths were compared cell by cell.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import type { Block } from '../../src/documents/document.ts';
import { runDocparse } from '../../src/documents/parse.ts';
import { tableGrid } from '../helpers/table-grid.ts';

async function blocks(set: string, name: string, page = 1): Promise<Block[]> {
  const data = readFileSync(new URL(`../../bench/docparse/public/${set}/${name}`, import.meta.url));
  const { document } = await runDocparse(data, { name, onPicture: async () => {} });
  return document.pages[page - 1]?.blocks ?? [];
}

async function tables(set: string, name: string, page = 1): Promise<Block[]> {
  return (await blocks(set, name, page)).filter((b) => b.label === 'table');
}

describe('tables against docling\'s truth (issue 41)', () => {
  test('"a superscript in a cell joins the printed line it is raised from": text_document_03\'s "formatting with x² and H₂O" reads "x2", not a "2" between the cell\'s lines', async () => {
    const [rich] = await tables('docling', 'text_document_03_odt.pdf');
    const rows = tableGrid(rich?.table);
    assert.equal(rows[2]?.[1], 'This is simple text with bold, strikethrough and italic formatting with x2 and H2O');
  });

  test('"a column rule drawn in most other rows but left out beside a cell\'s text, over empty neighbours, is left out because the cell spans on, up to the next rule the row draws": the slide\'s "Class1" and "Class2" each over three columns', async () => {
    const [slide] = await tables('docling', 'odf_presentation_01_odp.pdf');
    const header = (slide?.table?.cells ?? []).filter((c) => c.row === 0 && c.text !== '').map((c) => [c.text.replace(/^•\s*/, ''), c.col, c.colSpan]);
    assert.deepEqual(header, [['Class1', 1, 3], ['Class2', 4, 3]]);
  });

  test('"a horizontal edge ending a cell padding short of the column rules on both sides is a shading box\'s edge, not a rule between rows": right_to_left_03\'s wrapped keys stay one row each', async () => {
    const [, second] = await tables('docling', 'right_to_left_03.pdf');
    const rows = tableGrid(second?.table);
    assert.equal(rows.length, 8, JSON.stringify(rows));
    assert.ok(rows.some((row) => row.includes('نحوة تعيين قيمت پايه پس از پذيرش کالا در بورس') && row.includes('بر اساس قيمت های جهانی')), JSON.stringify(rows));
  });

  test('"a column with no text of its own is padding, also where a spanning header starts in it": eu-022\'s shaded header keeps five columns, "Never" over its own', async () => {
    const [table] = await tables('icdar2013', 'eu-022.pdf');
    assert.equal(table?.table?.numCols, 5);
    assert.deepEqual(tableGrid(table?.table)[1], ['Substance', 'In the last month', 'In the last year', 'More than a year', 'Never']);
  });

  test('"a column of its own inside a ruled column needs more printed lines on both sides of its gap than run across it": right_to_left_03\'s first table keeps two columns, the wrapped value one cell', async () => {
    const [first] = await tables('docling', 'right_to_left_03.pdf');
    assert.equal(first?.table?.numCols, 2);
    assert.deepEqual(tableGrid(first?.table)[0], ['نام استاندارد', 'شمشه و شمشال توليد شده به روش ريخته گری پيوسته مورد مصرف در فولادهای سازه ای - مطابق آناليز پيوست']);
  });

  test('"an edge inside one column of the grid, a hairline short of the column rules on both sides, is a shaded cell\'s box, not a row": eu-021 p. 2 reads Count and Percentage as the two rows of each difficulty, no empty row between', async () => {
    const [table] = await tables('icdar2013', 'eu-021.pdf', 2);
    const rows = tableGrid(table?.table);
    assert.deepEqual(rows.slice(1, 3), [
      ['Alcohol use', 'Count', '20', '56', '391'],
      ['Alcohol use', 'Percentage', '4.3%', '12.0%', '83.7%'],
    ]);
    assert.ok(rows.every((row) => row.some((cell) => cell !== '')), 'no empty row');
  });
  test('"a code listing between two rules is bounded by them alone": redp5110 p. 12\'s list items and "Example 3-9" caption over the rule above the SQL listing are no table, and the listing is code', async () => {
    const page = await blocks('docling', 'redp5110_sampled.pdf', 12);
    assert.equal(page.filter((b) => b.label === 'table').length, 0, JSON.stringify(page.filter((b) => b.label === 'table').map((b) => b.text)));
    assert.ok(page.some((b) => b.label === 'list_item' && b.text.includes('Human Resources can see the unmasked TAX_ID')));
    assert.ok(page.some((b) => b.label === 'code' && b.text.includes('CREATE MASK') && b.text.includes('HR_SCHEMA.MASK_TAX_ID_ON_EMPLOYEES')));
  });

  test('"a listing whose lines are long is monospaced when its short pieces advance exactly as its long lines do": redp5110 p. 13\'s commented listing ("/* … */" beside its comment) is code, not a table of three columns', async () => {
    const page = await blocks('docling', 'redp5110_sampled.pdf', 13);
    assert.equal(page.filter((b) => b.label === 'table').length, 0);
    const code = page.find((b) => b.label === 'code' && b.text.includes('ALTER TABLE HR_SCHEMA.EMPLOYEES'));
    assert.ok(code?.text.includes('Active Row Access Control (permissions)'), JSON.stringify(code?.text));
  });

  test('"a group heading over a partial rule above the column headers is the table\'s, spanning the columns its rule covers": us-023\'s "Year" over 1997 … 2007, and the years a header row, not headings', async () => {
    const page = await blocks('icdar2013', 'us-023.pdf');
    assert.ok(!page.some((b) => b.label === 'section_header' && /^(?:Year|\d{4}|Inequality measure)$/u.test(b.text.trim())), 'no heading from the header row');
    const [table] = page.filter((b) => b.label === 'table');
    const year = table?.table?.cells.find((c) => c.text === 'Year');
    assert.deepEqual([year?.row, year?.colSpan, year?.columnHeader], [0, 11, true]);
    assert.deepEqual(tableGrid(table?.table)[1]?.slice(0, 3), ['Inequality measure', '1997', '1998']);
  });

  test('"values set centred beside a row label wrapped on two lines are that label\'s row": us-023\'s "Between-state income inequality (Gini index)" is one row with its figures', async () => {
    const [table] = await tables('icdar2013', 'us-023.pdf');
    const rows = tableGrid(table?.table);
    assert.deepEqual(rows.find((row) => row[0]?.startsWith('Between-state income'))?.slice(0, 2), ['Between-state income inequality (Gini index)', '0.0628']);
    assert.deepEqual(rows.at(-1)?.slice(0, 2), ['Inequality in HALex (Gini index), ages 18–65 yrs', '0.0928']);
    assert.equal(rows.length, 9);
  });
  test('"a listing continued from the page before ends at its bottom rule", and "a blank line inside a listing does not end it": redp5110 p. 12 opens with one code block, RETURN … ENABLE ;, its blank lines kept', async () => {
    const page = await blocks('docling', 'redp5110_sampled.pdf', 12);
    const [first] = page;
    assert.equal(first?.label, 'code', JSON.stringify(first));
    const lines = first?.text.split('\n') ?? [];
    assert.deepEqual([lines[0], lines.at(-1)?.trim()], ['RETURN', 'ENABLE ;']);
    assert.ok(lines.includes(''), 'the blank lines between its WHEN clauses are kept');
    assert.ok(lines.some((line) => line.includes("MONTH ( EMPLOYEES . DATE_OF_BIRTH ) || '-' ||")), 'the "||" set apart stays on its line');
  });
});
