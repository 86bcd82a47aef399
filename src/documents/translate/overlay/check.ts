// The check that sees what a reader sees (issue 26): from the words poppler finds on a translated
// page (`pdftotext -bbox-layout`) and on its source page, per page —
//   (a) words printed over other words (beyond a hair's tolerance),
//   (b) translated words in a column gutter of the source page, or on a picture, rule or table the
//       source's text did not cover,
//   (c) text below the source's bottom margin (the lowest source text) or off the page,
//   (d) the smallest font size against the source's, and text set below 70 % of the source size at
//       its place,
//   (e) every source block's translation present on the page.
// Pure: the caller reads the PDFs (check-pdf.ts) and hands words, lines, sizes and obstacles in.
// All boxes are top-down page points, as pdftotext reports them.

import { boldBlocks, centreIn } from './check-weight.ts';
export type Box = { xMin: number; yMin: number; xMax: number; yMax: number };
export type Word = Box & { text: string };
/** A run of text with its font size and fill colour (the PDF reader's), for (d) and (f); its text where known. */
export type SizedRun = Box & { size: number; color?: string; text?: string; /** Set in a bold face (the reader's view of its font). */ bold?: boolean };

export type PageCheckInput = {
  pageNo: number;
  width: number;
  height: number;
  source: {
    words: Word[];
    /** pdftotext's lines of the source page: the gutters are found between them. */
    lines: Box[];
    /** Pictures, figures, rules and tables of the source page that translated text must not run into. */
    obstacles?: Box[];
    /** The source's tables: a cell's translation may use its column gap (issue 42), so the gaps inside a table are no gutters. */
    tables?: Box[];
    runs?: SizedRun[];
    /** The source's blocks (a table's cells), for (f): a translated run's colour is checked against the source runs of its own block. */
    regions?: Box[];
  };
  translated: { words: Word[]; runs?: SizedRun[] };
  /** The page's source blocks that should show a translation, with that translation (or why not). */
  blocks?: Array<{ source: string; translation: string }>;
  /** Characters of the page's translation that no font of the chain draws (font-chain.ts): printed as .notdef boxes. */
  missingGlyphs?: number;
  /** Words of the notes pages (notes.ts): a block continued there is present, in part here and in part there. */
  continued?: Word[];
  /** This is a notes page appended after the source's pages, not one of them. */
  notesPage?: boolean;
  /** The source blocks of the page by kind (overlay/kinds.ts), with their boxes: which kind a notes marker ("→3") stands in. */
  kinds?: Array<{ kind: string; box: Box }>;
  /** (g) Words of the source set in another style than their block's, and how many of them the engine's markup lost. */
  styles?: { styledWords: number; lost: number };
};

export type Gutter = Box;

export type PageCheck = {
  pageNo: number;
  /** Places (groups of words touching each other) where text is printed over text. */
  overlapPlaces: number;
  overlappingWords: number;
  /** Translated words standing in a column gutter of the source page. */
  gutterCrossings: number;
  /** Translated words on a picture, rule or table that no source text covered there. */
  intoDrawings: number;
  belowMargin: number;
  smallestSize?: number;
  sourceSmallestSize?: number;
  /** Text runs set below 70 % of the source size at their place. */
  belowFloor: number;
  /** Characters printed as missing-glyph boxes (.notdef). */
  missingGlyphs: number;
  /** A notes page appended after the source's pages (text continued from where it did not fit at 70 %). */
  notesPage?: boolean;
  /** Issue 42: blocks of this page continued on a notes page, by kind ("running text", "table cell", "list item" …). */
  toNotes?: Record<string, number>;
  /** (f) Translated runs in a colour no source run of their block has there, and source colours of a block none of its translated runs keeps. */
  colourChanged: number;
  /** (g) Source words in another style than their block's (bold, italic, a colour), and those whose style the translation lost. */
  styledWords: number;
  styleFallbacks: number;
  /** Source blocks: their translation on the page, or their source text kept in its place (a drawing's label), or neither. */
  blocks?: { total: number; present: number; kept: number; missing: string[] };
  /** Short descriptions of the first problems, for a person to find them on the page. */
  examples: string[];
};

/** Overlap beyond this (points, both ways) is text over text; kerning and italics stay under it. */
export const HAIR = 1;
export const SIZE_FLOOR = 0.7;

/**
 * The part of a word box where glyphs of two lines can only meet if the lines collide: pdftotext's
 * box spans the font's whole ascent and descent (1.45 em in Noto Sans SC), so boxes of lines set at
 * 1.2 em overlap while their letters do not. The core runs from about the x-height to the baseline.
 */
export function core(w: Box): Box {
  const h = w.yMax - w.yMin;
  return { xMin: w.xMin, xMax: w.xMax, yMin: w.yMin + 0.35 * h, yMax: w.yMax - 0.2 * h };
}

const overlapX = (a: Box, b: Box) => Math.min(a.xMax, b.xMax) - Math.max(a.xMin, b.xMin);
const overlapY = (a: Box, b: Box) => Math.min(a.yMax, b.yMax) - Math.max(a.yMin, b.yMin);
const inside = (a: Box, b: Box) => a.xMin >= b.xMin - 0.5 && a.xMax <= b.xMax + 0.5 && a.yMin >= b.yMin - 0.5 && a.yMax <= b.yMax + 0.5;
const intersects = (a: Box, b: Box, slack = 0) => overlapX(a, b) > slack && overlapY(a, b) > slack;

/** Groups of words whose cores overlap by more than a hair: each group is one place to look at. */
export function overlaps(words: Word[]): { places: number; words: number; examples: string[] } {
  const cores = words.map(core);
  const parent = words.map((_, i) => i);
  const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
  const involved = new Set<number>();
  const examples: string[] = [];
  const order = words.map((_, i) => i).sort((a, b) => cores[a]!.yMin - cores[b]!.yMin);
  for (let x = 0; x < order.length; x++) {
    const i = order[x]!;
    for (let y = x + 1; y < order.length; y++) {
      const j = order[y]!;
      if (cores[j]!.yMin >= cores[i]!.yMax) break;
      if (overlapX(cores[i]!, cores[j]!) <= HAIR || overlapY(cores[i]!, cores[j]!) <= Math.min(HAIR, (cores[i]!.yMax - cores[i]!.yMin) / 2)) continue;
      // The same word drawn twice in the same place (a fake-bold stroke) is one word to a reader.
      if (words[i]!.text === words[j]!.text && Math.abs(words[i]!.xMin - words[j]!.xMin) < 1 && Math.abs(words[i]!.yMin - words[j]!.yMin) < 1) continue;
      involved.add(i).add(j);
      if (find(i) !== find(j)) parent[find(i)] = find(j);
      if (examples.length < 3) examples.push(`"${words[i]!.text}" over "${words[j]!.text}" at y ${Math.round(words[i]!.yMin)}`);
    }
  }
  const places = new Set([...involved].map(find));
  return { places: places.size, words: involved.size, examples };
}

/**
 * The column gutters of a page: vertical strips between lines that stand side by side on at least
 * three rows, with no line crossing the strip in between (a full-width heading ends a gutter).
 * A column reaches as far as its longest line: where a line of the strip's rows runs into the strip
 * from one side (a ragged right edge, a line with no neighbour on its row), the gutter begins after
 * it — the white strip no line enters, as the overlay finds it from its blocks' boxes.
 * `tables`: gaps between a table's columns are the cells' room (issue 42), no gutter's rows; and a
 * table across the strip ends it, as a full-width heading does (the gap beside a title above the
 * table and the gutter between the columns below it are not one strip).
 */
export function gutters(lines: Box[], tables: Box[] = []): Gutter[] {
  type Gap = { xMin: number; xMax: number; yMin: number; yMax: number };
  const gaps: Gap[] = [];
  for (const a of lines) {
    // The nearest line to the right of a on the same row.
    let next: Box | undefined;
    for (const b of lines) {
      if (b === a || b.xMin < a.xMax - 0.5) continue;
      const h = Math.min(a.yMax - a.yMin, b.yMax - b.yMin);
      if (overlapY(a, b) < h * 0.5) continue;
      if (!next || b.xMin < next.xMin) next = b;
    }
    if (!next || next.xMin - a.xMax < 4) continue;
    const gap = { xMin: a.xMax, xMax: next.xMin, yMin: Math.min(a.yMin, next.yMin), yMax: Math.max(a.yMax, next.yMax) };
    if (!tables.some((t) => inside(gap, t))) gaps.push(gap);
  }
  gaps.sort((a, b) => a.yMin - b.yMin);
  const found: Gutter[] = [];
  const used = new Set<Gap>();
  for (const seed of gaps) {
    if (used.has(seed)) continue;
    let strip = { ...seed };
    const members = [seed];
    for (const gap of gaps) {
      if (used.has(gap) || members.includes(gap)) continue;
      const xMin = Math.max(strip.xMin, gap.xMin);
      const xMax = Math.min(strip.xMax, gap.xMax);
      if (xMax - xMin < 3) continue;
      // No line may cross the strip between the gutter so far and this row.
      const between = { xMin: xMin + 0.5, xMax: xMax - 0.5, yMin: Math.min(strip.yMax, gap.yMin), yMax: Math.max(strip.yMax, gap.yMin) };
      if ([...lines, ...tables].some((l) => l.xMin < between.xMin && l.xMax > between.xMax && overlapY(l, between) > 0.5)) continue;
      strip = { xMin, xMax, yMin: Math.min(strip.yMin, gap.yMin), yMax: Math.max(strip.yMax, gap.yMax) };
      members.push(gap);
    }
    const rows = new Set(members.map((m) => Math.round(m.yMin / 3)));
    if (rows.size >= 3) {
      members.forEach((m) => used.add(m));
      found.push(narrowed(strip, lines));
    }
  }
  return found;
}

/** The strip less what lines of its rows cover from either side (a line across it is another matter: see gutters). */
function narrowed(strip: Gutter, lines: Box[]): Gutter {
  let { xMin, xMax } = strip;
  for (const l of lines) {
    if (overlapY(l, strip) <= 0.5) continue;
    if (l.xMin < strip.xMin && l.xMax > xMin && l.xMax < strip.xMax) xMin = l.xMax;
    if (l.xMax > strip.xMax && l.xMin < xMax && l.xMin > strip.xMin) xMax = l.xMin;
  }
  return xMax - xMin >= 3 ? { ...strip, xMin, xMax } : strip;
}

/** Whether every sample point of `box` lies in one of `covers`. */
function covered(box: Box, covers: Box[]): boolean {
  for (const fx of [0.1, 0.5, 0.9]) {
    for (const fy of [0.2, 0.8]) {
      const x = box.xMin + fx * (box.xMax - box.xMin);
      const y = box.yMin + fy * (box.yMax - box.yMin);
      if (!covers.some((c) => x >= c.xMin && x <= c.xMax && y >= c.yMin && y <= c.yMax)) return false;
    }
  }
  return true;
}

const CJK_CHAR = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/gu;
/** Latin (and other spaced scripts') words, and single CJK characters: what a translation is made of. */
export const tokens = (text: string) => (text.normalize('NFKC').toLowerCase().replace(CJK_CHAR, ' $& ').match(/[\p{L}\p{N}]+/gu) ?? []);

export function checkPage(input: PageCheckInput): PageCheck {
  const { source, translated } = input;
  const examples: string[] = [];
  const over = overlaps(translated.words);
  examples.push(...over.examples);
  const sourceBoxes = source.words.map((w) => ({ xMin: w.xMin - 2, xMax: w.xMax + 2, yMin: w.yMin - 2, yMax: w.yMax + 2 }));
  // A translated word that stands where source text stood (a kept number, a label in its place) is
  // never a crossing: only text the source did not have there is counted.
  // A symbol set where the source's symbol starts (a list bullet in its place, in a wider font) is the source's too.
  const sourceMarker = (w: Word) => [...w.text].length === 1 && !/[\p{L}\p{N}]/u.test(w.text) && source.words.some((s) => [...s.text].length === 1 && Math.abs(s.xMin - w.xMin) < 1 && overlapY(s, w) > 0);
  const newWords = translated.words.filter((w) => !covered(core(w), sourceBoxes) && !sourceMarker(w));

  // spec (issue 42): "table cells … use the cell's free width and the column gap" — a gap between a
  // table's columns is the cells' room, not a gutter between columns of text.
  // A strip may run on above or below the table (a title row): inside the table's box a word is the
  // cells' business (overlaps count there), outside it a gutter word.
  const tables = (source.tables ?? []).map((t) => ({ xMin: t.xMin - 2, xMax: t.xMax + 2, yMin: t.yMin - 2, yMax: t.yMax + 2 }));
  const strips = gutters(source.lines, tables);
  const crossing = newWords.filter((w) => strips.some((g) => overlapX(core(w), g) > HAIR && overlapY(core(w), g) > HAIR) && !tables.some((t) => inside(core(w), t)));
  for (const w of crossing.slice(0, 2)) examples.push(`"${w.text}" in the gutter at x ${Math.round(w.xMin)}, y ${Math.round(w.yMin)}`);

  const obstacles = (source.obstacles ?? []).filter((o) => (o.xMax - o.xMin) * (o.yMax - o.yMin) < 0.6 * input.width * input.height);
  // A drawing the source's text stood on (a panel behind a sidebar, a shaded table, a photograph
  // with its labels) holds text by design: there only a word that runs over its edge counts.
  const holdsText = obstacles.map((o) => source.words.some((w) => inside(core(w), o)));
  const into = newWords.filter((w) => obstacles.some((o, k) => intersects(core(w), o, 0.5) && (!holdsText[k] || !inside(core(w), o))));
  for (const w of into.slice(0, 2)) examples.push(`"${w.text}" on a drawing at y ${Math.round(w.yMin)}`);

  // The bottom margin: the source's lowest text where it is in the page's bottom eighth (a footer,
  // the last line of a full page); a page whose text ends higher lets text move down to its outer 3 %.
  const lowest = Math.max(0, ...source.words.map((w) => core(w).yMax));
  const sourceBottom = lowest >= input.height * 7 / 8 ? lowest : input.height * 0.97;
  const below = translated.words.filter((w) => core(w).yMax > sourceBottom + 2 || w.xMax > input.width + 1 || w.xMin < -1 || core(w).yMin < -1);
  for (const w of below.slice(0, 2)) examples.push(`"${w.text}" below the margin at y ${Math.round(w.yMin)}`);

  const smallest = (runs: SizedRun[] | undefined) => (runs && runs.length > 0 ? Math.min(...runs.map((r) => r.size)) : undefined);
  let belowFloor = 0;
  if (translated.runs && source.runs && source.runs.length > 0) {
    for (const run of translated.runs) {
      const at = sourceSizeAt(run, source.runs);
      if (at !== undefined && run.size < at * SIZE_FLOOR - 0.05) belowFloor++;
    }
  }

  // (f) Colour: every translated run in the colour of its source run. A translation is not laid out
  // word for word where the source's words stood (a blue link in a Chinese line stands elsewhere in
  // its English line), so "its source run" is the same block's: a run in a colour no source run of
  // the block at its place has is a changed colour, and so is a colour of the block's source runs that
  // none of its translated runs keeps (a red bullet printed black). A symbol set where the source's
  // same symbol stands (a kept bullet) is that run itself and has its colour exactly.
  let colourChanged = 0;
  if (translated.runs && source.runs && source.runs.length > 0) {
    const regions = source.regions ?? [];
    const regionOf = (r: Box) => regions.find((region) => centreIn(r, region));
    const coloursIn = (region: Box, runs: SizedRun[]) => runs.filter((r) => r.color && centreIn(r, region)).map((r) => r.color!);
    const report = (what: string) => { colourChanged++; if (examples.length < 5) examples.push(what); };
    for (const run of translated.runs) {
      const at = sourceRunAt(run, source.runs);
      if (!at?.color || !run.color || sameColour(at.color, run.color)) continue;
      const sameSymbol = at.text !== undefined && run.text !== undefined && at.text.trim() === run.text.trim() && Math.abs(at.xMin - run.xMin) < 1;
      const region = regionOf(at);
      if (!sameSymbol && region && coloursIn(region, source.runs).some((c) => sameColour(c, run.color!))) continue;
      report(`a run in ${run.color} where the source's is ${at.color}, at y ${Math.round(run.yMin)}`);
    }
    // A translated line may run on past its source box (widened to its column's measure): a run is
    // its block's when it stands on the block's rows, right of the block's left edge and of no other's nearer.
    const owner = (r: Box) => {
      const y = (r.yMin + r.yMax) / 2;
      let found: Box | undefined;
      for (const region of regions) if (y >= region.yMin - 1 && y <= region.yMax + 1 && region.xMin <= r.xMin + 1 && (!found || region.xMin > found.xMin)) found = region;
      return found;
    };
    const owned = new Map<Box, string[]>();
    for (const r of translated.runs) { const region = r.color ? owner(r) : undefined; if (region) owned.set(region, [...(owned.get(region) ?? []), r.color!]); }
    for (const region of regions) {
      const translatedColours = owned.get(region) ?? [];
      if (translatedColours.length === 0) continue; // the block moved, or was kept as drawn
      for (const colour of new Set(coloursIn(region, source.runs))) {
        if (!translatedColours.some((c) => sameColour(c, colour))) report(`no run in ${colour} where the source's block has one, at y ${Math.round(region.yMin)}`);
      }
    }
  }

  // (g) Whole-block bold kept (check-weight.ts), counted with the styled words.
  const weight = translated.runs && source.runs && source.regions ? boldBlocks(source.regions, source.runs, translated.runs) : { words: 0, lost: 0, where: [] };
  for (const y of weight.where) if (examples.length < 5) examples.push(`a bold block set regular, at y ${y}`);

  let blocks: PageCheck['blocks'];
  if (input.blocks) {
    const onPage = new Set(tokens([...translated.words, ...(input.continued ?? [])].map((w) => w.text).join(' ')));
    const shown = (text: string) => {
      const wanted = [...new Set(tokens(text))];
      return wanted.length === 0 || wanted.filter((t) => onPage.has(t)).length >= 0.9 * wanted.length;
    };
    const absent = input.blocks.filter((b) => !shown(b.translation));
    const missing = absent.filter((b) => !shown(b.source));
    blocks = { total: input.blocks.length, present: input.blocks.length - absent.length, kept: absent.length - missing.length, missing: missing.map((b) => b.source.slice(0, 60)) };
  }
  // Issue 42: the blocks continued on a notes page, by kind — each marker "→N" on the page stands at
  // the end of the block it continues (it may have moved down with the reflow: the nearest block above it).
  const toNotes: Record<string, number> = {};
  if (!input.notesPage && input.kinds) {
    for (const marker of translated.words.filter((w) => /^→\d+$/u.test(w.text))) {
      const c = core(marker);
      const at: { kind: string; box: Box } | undefined = input.kinds.find((k) => c.xMin >= k.box.xMin - 2 && c.xMax <= k.box.xMax + 2 && c.yMin >= k.box.yMin - 2 && c.yMax <= k.box.yMax + 2)
        ?? input.kinds.filter((k) => overlapX(c, k.box) > 0 && k.box.yMin <= c.yMin).sort((a, b) => b.box.yMin - a.box.yMin)[0];
      const kind = at?.kind ?? 'unknown';
      toNotes[kind] = (toNotes[kind] ?? 0) + 1;
    }
  }
  return {
    pageNo: input.pageNo,
    overlapPlaces: over.places,
    overlappingWords: over.words,
    gutterCrossings: crossing.length,
    intoDrawings: into.length,
    belowMargin: below.length,
    smallestSize: smallest(translated.runs),
    sourceSmallestSize: smallest(source.runs),
    belowFloor,
    missingGlyphs: input.missingGlyphs ?? 0,
    colourChanged,
    styledWords: (input.styles?.styledWords ?? 0) + weight.words,
    styleFallbacks: (input.styles?.lost ?? 0) + weight.lost,
    ...(input.notesPage ? { notesPage: true } : {}),
    ...(Object.keys(toNotes).length > 0 ? { toNotes } : {}),
    ...(blocks ? { blocks } : {}),
    examples: examples.slice(0, 5),
  };
}

/** Colours a reader cannot tell apart (a rounding step of the colour space) are the same. */
function sameColour(a: string, b: string): boolean {
  const channels = (c: string) => [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16));
  const [x, y] = [channels(a), channels(b)];
  return x.every((v, i) => Math.abs(v - y[i]!) <= 2);
}

/** The size of the source text where a translated run stands: the source run it overlaps most, else the nearest one above it. */
function sourceSizeAt(run: SizedRun, runs: SizedRun[]): number | undefined {
  return sourceRunAt(run, runs)?.size;
}

function sourceRunAt(run: SizedRun, runs: SizedRun[]): SizedRun | undefined {
  let best: SizedRun | undefined;
  let bestArea = 0;
  for (const r of runs) {
    const area = Math.max(0, overlapX(r, run)) * Math.max(0, overlapY(r, run));
    if (area > bestArea) { bestArea = area; best = r; }
  }
  if (best) return best;
  let above: SizedRun | undefined;
  for (const r of runs) if (overlapX(r, run) > 0 && r.yMax <= run.yMin + 1 && (!above || r.yMax > above.yMax)) above = r;
  return above;
}

/** The sentence a person reads on the result view: which pages to look at, and why. */
export function describePage(check: Pick<PageCheck, 'overlapPlaces' | 'gutterCrossings' | 'intoDrawings' | 'belowMargin'> & Partial<Pick<PageCheck, 'missingGlyphs' | 'styleFallbacks'>>): string[] {
  const say = (n: number, one: string, many: string) => (n === 0 ? [] : [n === 1 ? one : many.replace('{n}', String(n))]);
  return [
    ...say(check.overlapPlaces, '1 place where text overlaps', '{n} places where text overlaps'),
    ...say(check.gutterCrossings, '1 word in the gap between columns', '{n} words in the gap between columns'),
    ...say(check.intoDrawings, '1 word over a picture or rule', '{n} words over a picture or rule'),
    ...say(check.belowMargin, '1 word below the bottom margin', '{n} words below the bottom margin'),
    ...say(check.missingGlyphs ?? 0, '1 character printed as an empty box (no font here has it)', '{n} characters printed as empty boxes (no font here has them)'),
    ...say(check.styleFallbacks ?? 0, '1 word in its paragraph\'s style (the engine lost its bold, italic or colour)', '{n} words in their paragraph\'s style (the engine lost their bold, italic or colour)'),
  ];
}
