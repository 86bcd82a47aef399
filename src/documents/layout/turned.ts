// Pages whose text runs up or down the page: a landscape table on a page with /Rotate 90, a
// spreadsheet exported sideways, a slide turned 270°. The reader hands runs over in the unrotated
// page, where such text runs along y; read there, every row of a table falls apart into letters.
// The page is turned so its text runs left to right, laid out there, and every box turned back, so
// the result stays in the page's own coordinates (where the translation overlay draws).
import type { Block, BoundingBox, Page } from '../document.ts';
import type { PageContent, Ruling, TextRun } from './geometry.ts';

/** Which way the text runs: 0 along x (as usual), 90 up the page (+y), 270 down it (−y). */
export type Turn = 0 | 90 | 270;

/** At least this share of runs must sit on another's baseline inside its extent for text to run along y. */
const MIN_OVERLAPPING_SHARE = 0.25;

/**
 * Text runs along y when many runs share a baseline with another run whose extent overlaps theirs —
 * impossible for text set along x (two words on one baseline never overlap), and exactly what the
 * rows of turned text look like when each run's length is taken along x.
 */
export function textTurn(runs: TextRun[]): Turn {
  const text = runs.filter((r) => r.text.trim() !== '' && r.width > 0);
  // spec (issue 41): "a run's writing direction in PageContent" — where the reader gives it, most of the
  // page's letters running up (or down) it decide; a slide printed sideways is read with its text upright.
  const letters = (direction: TextRun['direction']) => text.filter((r) => r.direction === direction).reduce((n, r) => n + r.text.length, 0);
  const all = text.reduce((n, r) => n + r.text.length, 0);
  if (letters(90) > all / 2) return 90;
  if (letters(270) > all / 2) return 270;
  if (text.some((r) => r.direction !== undefined) || text.length < 4) return text.length < 4 ? 0 : guessTurn(text);
  return guessTurn(text);
}

/** Without writing directions (OCR, older readers): the turn guessed from where the runs lie. */
function guessTurn(text: TextRun[]): Turn {
  const byBaseline = [...text].sort((a, b) => a.y - b.y || a.x - b.x);
  let overlapping = 0;
  for (let i = 0; i < byBaseline.length; i += 1) {
    const a = byBaseline[i] as TextRun;
    for (let j = i + 1; j < byBaseline.length; j += 1) {
      const b = byBaseline[j] as TextRun;
      if (b.y - a.y > 0.1 * a.size) break;
      const overlap = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
      // Text drawn again a fraction of a point off (fake bold), whole or in pieces, is not a second row.
      const drawnAgain = a.text.includes(b.text) || b.text.includes(a.text);
      // Rows of turned text stand a line apart (an em or more); glyphs of one word a fraction of an em
      // apart overlap only because their widths were read too wide (a condensed face): not a second row.
      const rowApart = Math.abs(b.x - a.x) >= 0.8 * Math.min(a.size, b.size);
      if (overlap > 0.5 * Math.min(a.width, b.width) && !drawnAgain && rowApart) {
        overlapping += 1;
        break;
      }
    }
  }
  if (overlapping < MIN_OVERLAPPING_SHARE * text.length) return 0;
  // Along one vertical line, runs set up the page (+y) reach from their start upwards, runs set down
  // it from their start downwards: the direction in which neighbours do not run into each other is the
  // text's; failing that, the one in which the runs follow each other most often.
  const lines = [...text].sort((a, b) => a.x - b.x || a.y - b.y);
  let intoUp = 0;
  let intoDown = 0;
  for (let i = 1; i < lines.length; i += 1) {
    const [a, b] = [lines[i - 1] as TextRun, lines[i] as TextRun];
    if (Math.abs(a.x - b.x) > 0.1 * a.size) continue;
    if (a.y + a.width > b.y + 0.1 * a.size) intoUp += 1;
    if (b.y - b.width < a.y - 0.1 * a.size) intoDown += 1;
  }
  if (intoUp !== intoDown) return intoUp < intoDown ? 90 : 270;
  let up = 0;
  let down = 0;
  for (let i = 1; i < text.length; i += 1) {
    const [a, b] = [text[i - 1] as TextRun, text[i] as TextRun];
    if (Math.abs(a.x - b.x) > 0.2 * a.size) continue;
    if (b.y > a.y) up += 1;
    else if (b.y < a.y) down += 1;
  }
  return up >= down ? 90 : 270;
}

type Size = { width: number; height: number };

/** A point of the unrotated page as it is seen with the text running left to right. */
function turnPoint(x: number, y: number, turn: Turn, page: Size): [number, number] {
  if (turn === 90) return [y, page.width - x];
  if (turn === 270) return [page.height - y, x];
  return [x, y];
}

function turnBox(box: BoundingBox, turn: Turn, page: Size): BoundingBox {
  const [x1, y1] = turnPoint(box.l, box.b, turn, page);
  const [x2, y2] = turnPoint(box.r, box.t, turn, page);
  return { l: Math.min(x1, x2), r: Math.max(x1, x2), b: Math.min(y1, y2), t: Math.max(y1, y2) };
}

/** A box of the turned page back in the unrotated page. */
function unturnBox(box: BoundingBox, turn: Turn, page: Size): BoundingBox {
  if (turn === 90) return { l: page.width - box.t, r: page.width - box.b, b: box.l, t: box.r };
  if (turn === 270) return { l: box.b, r: box.t, b: page.height - box.r, t: page.height - box.l };
  return box;
}

/** The page's content with its text running left to right (a run's start and baseline turned with it). */
export function turnContent(content: PageContent, turn: Turn): PageContent {
  if (turn === 0) return content;
  const runs = content.runs.map((run): TextRun => {
    const [x, y] = turnPoint(run.x, run.y, turn, content);
    // Its writing direction in the turned page: text running with the turn runs left to right there.
    const { direction, ...upright } = run;
    const turnedDirection = (((direction ?? 0) - turn) % 360 + 360) % 360;
    return { ...upright, x, y, ...(turnedDirection === 0 ? {} : { direction: turnedDirection as 90 | 180 | 270 }) };
  });
  const rulings = content.rulings.map((r): Ruling => {
    const box = turnBox({ l: r.x1, r: r.x2, b: r.y1, t: r.y2 }, turn, content);
    return { x1: box.l, x2: box.r, y1: box.b, y2: box.t };
  });
  const images = (content.images ?? []).map((image) => ({ bbox: turnBox(image.bbox, turn, content) }));
  return { ...content, runs, rulings, images, width: content.height, height: content.width };
}

/** The page laid out turned, with every box back in the unrotated page and its own size. */
export function unturnPage(page: Page, turn: Turn, content: Size): Page {
  if (turn === 0) return page;
  const back = (box: BoundingBox) => unturnBox(box, turn, content);
  const blocks = page.blocks.map((block) => ({
    ...block,
    bbox: back(block.bbox),
    ...(block.table ? { table: { ...block.table, cells: block.table.cells.map((cell) => ({ ...cell, bbox: back(cell.bbox) })) } } : {}),
  }));
  return { ...page, width: content.width, height: content.height, blocks };
}

/**
 * Text set up or down an upright page (a printer's slug in the margin, a turned label): one line as
 * tall as a word is long and as wide as a letter is high. A translation set across the page there
 * would run over the lines beside it; it stays as the source drew it.
 */
export function isTurnedBlock(block: Block): boolean {
  const width = block.bbox.r - block.bbox.l;
  const height = block.bbox.t - block.bbox.b;
  return block.fontSize > 0 && width <= 1.5 * block.fontSize && height >= 3 * block.fontSize && /[\p{L}]{2}/u.test(block.text) && !/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u.test(block.text);
}
