// Form fields with their labels (issue 41, item 5: "form fields (AcroForm widgets and their labels)
// as docling's key_value_items"): each widget the reader found is given the printed text that names
// it — a text box, list or combo box the line to its left on the same band, else the line just
// above it; a check box or radio button the words to its right (its own choice), and a group of
// radio buttons the line above the group — and its value: what was typed or chosen, or for a check
// box its state. A field whose label cannot be found on the page is named by its tooltip (/TU),
// else by the last part of its field name.
import type { BoundingBox, FormEntry } from '../document.ts';
import type { FormField, Line, TextRun } from './geometry.ts';
import { groupLines } from './lines.ts';

/** How far (points) a label may stand to the left of its field, or a choice's words to the right of its box. */
const LEFT_REACH = 200;
const RIGHT_REACH = 150;
/** How far above a field's top (in the label line's heights) its label may stand. */
const ABOVE_REACH = 2.5;

const overlapY = (a: BoundingBox, b: BoundingBox) => Math.min(a.t, b.t) - Math.max(a.b, b.b);
const overlapX = (a: BoundingBox, b: BoundingBox) => Math.min(a.r, b.r) - Math.max(a.l, b.l);
/** On the same band: the line's middle lies within the field's height, or the two overlap by half the line. */
const sameBand = (line: Line, box: BoundingBox) => {
  const middle = (line.bbox.t + line.bbox.b) / 2;
  return (middle <= box.t && middle >= box.b) || overlapY(line.bbox, box) >= 0.5 * (line.bbox.t - line.bbox.b);
};

function leftOf(lines: Line[], box: BoundingBox): Line | undefined {
  const found = lines.filter((l) => sameBand(l, box) && l.bbox.r <= box.l + 2 && box.l - l.bbox.r <= LEFT_REACH);
  return found.sort((a, b) => b.bbox.r - a.bbox.r)[0];
}

function rightOf(lines: Line[], box: BoundingBox): Line | undefined {
  const found = lines.filter((l) => sameBand(l, box) && l.bbox.l >= box.r - 2 && l.bbox.l - box.r <= RIGHT_REACH);
  return found.sort((a, b) => a.bbox.l - b.bbox.l)[0];
}

function above(lines: Line[], box: BoundingBox): Line | undefined {
  const found = lines.filter((l) => l.bbox.b >= box.t - 2 && l.bbox.b - box.t <= ABOVE_REACH * Math.max(1, l.bbox.t - l.bbox.b) && overlapX(l.bbox, { ...box, l: box.l - 10 }) > 0);
  return found.sort((a, b) => a.bbox.b - b.bbox.b)[0];
}

const union = (boxes: BoundingBox[]): BoundingBox => ({ l: Math.min(...boxes.map((b) => b.l)), r: Math.max(...boxes.map((b) => b.r)), t: Math.max(...boxes.map((b) => b.t)), b: Math.min(...boxes.map((b) => b.b)) });

/** The name a field goes by when no label is printed for it: its tooltip, else its name's last part ("topmostSubform[0].Page1[0].f1_01[0]" → "f1_01"). */
const fallbackKey = (field: FormField) => field.tooltip ?? (field.name.split('.').at(-1) ?? field.name).replace(/\[\d+\]$/, '');

/** The page's fields as key–value entries, top to bottom then left to right; push buttons are left out (they hold no answer). */
export function labelFields(fields: FormField[], runs: TextRun[]): FormEntry[] {
  const kept = fields.filter((f) => f.type !== 'button');
  if (kept.length === 0) return [];
  // The page's lines, but none drawn inside a field (a field's own printed value or comb boxes).
  const lines = groupLines(runs).filter((line) => !kept.some((f) => overlapX(line.bbox, f.bbox) > 0.8 * (line.bbox.r - line.bbox.l) && overlapY(line.bbox, f.bbox) > 0.8 * (line.bbox.t - line.bbox.b)));
  const entries: FormEntry[] = [];
  const key = (line: Line | undefined, field: FormField) => (line ? { key: line.text.replace(/\s*[:：]\s*$/u, ''), keyBbox: line.bbox } : { key: fallbackKey(field) });
  const radios = new Map<string, FormField[]>();
  for (const field of kept) {
    if (field.type === 'radio') {
      radios.set(field.name, [...(radios.get(field.name) ?? []), field]);
      continue;
    }
    if (field.type === 'checkbox') {
      const on = field.checked ?? (field.value !== '' && field.value !== 'Off');
      entries.push({ name: field.name, type: field.type, ...key(rightOf(lines, field.bbox) ?? leftOf(lines, field.bbox), field), value: on ? 'Yes' : 'Off', bbox: field.bbox });
      continue;
    }
    entries.push({ name: field.name, type: field.type, ...key(leftOf(lines, field.bbox) ?? above(lines, field.bbox), field), value: field.value, bbox: field.bbox });
  }
  for (const [name, group] of radios) {
    const box = union(group.map((f) => f.bbox));
    const chosen = group.find((f) => f.checked) ?? group.find((f) => f.exportValue !== undefined && f.exportValue === f.value);
    // The chosen button's words on the page ("Saturn IV"), else the field's value as the PDF stores it.
    const value = chosen ? (rightOf(lines, chosen.bbox)?.text ?? chosen.exportValue ?? chosen.value) : '';
    entries.push({ name, type: 'radio', ...key(above(lines, box) ?? leftOf(lines, box), group[0] as FormField), value, bbox: box });
  }
  return entries.sort((a, b) => b.bbox.t - a.bbox.t || a.bbox.l - b.bbox.l);
}
