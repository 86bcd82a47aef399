// A page's characters, as PDFium's text page lists them in content order, grouped into the text runs
// the layout stages read: one run is a stretch of one line in one font, size, colour and marked-content
// id, cut where the gap is wider than a word space — the grouping pdf.js made (its text items),
// so layout/lines.ts joins and splits them as before.
import { CJK, type TextRun } from '../layout/geometry.ts';
import { fontStyle, PICTURE_CODES, type FontStyle } from './fonts.ts';
import { readUtf8, Scratch, type Pdfium } from './pdfium.ts';

/** pdf.js's thresholds, in em of the font size (its text_layer builder): a gap above SPACE_MIN is a word space … */
const SPACE_MIN = 0.102;
/** … one above SPLIT_GAP starts a new run (a column or a tab stop), as does a step back of more than BACK_GAP. */
const SPLIT_GAP = 0.6;
const BACK_GAP = 0.2;
/** Characters whose baselines differ by less than this (in em) are on one line (a TeX logo's lowered E stays in its word). */
const SAME_BASELINE = 0.5;

/** One character of the text page (page points, unrotated, before the crop box origin is taken off). */
type Char = { text: string; x: number; y: number; left: number; right: number; bottom: number; top: number; size: number; object: number; rtl: boolean };

type RunKey = { style: FontStyle; font: number; size: number; color: string; mcid: number; artifact: boolean };

/** Right-to-left letters: Hebrew, Arabic, Syriac, Thaana, NKo, Samaritan, Mandaic and their presentation forms (U+0590–08FF, FB1D–FDFF, FE70–FEFC). */
const isRtl = (code: number) => (code >= 0x0590 && code <= 0x08ff) || (code >= 0xfb1d && code <= 0xfdff) || (code >= 0xfe70 && code <= 0xfefc);

const hex = (n: number) => Math.max(0, Math.min(255, n)).toString(16).padStart(2, '0');

/** Per text object: its font (and that font's style), fill colour and marked-content id, read once. */
function objectFacts(pdfium: Pdfium, scratch: Scratch, fonts: Map<number, FontStyle>, artifacts: Set<number>) {
  const cache = new Map<number, { font: number; style: FontStyle; color: string; mcid: number; scale: number; artifact: boolean; keys: Map<number, RunKey> }>();
  return (object: number) => {
    let facts = cache.get(object);
    if (facts) return facts;
    const font = pdfium.FPDFTextObj_GetFont(object);
    let style = fonts.get(font);
    if (!style) {
      const name = font === 0 ? '' : readUtf8(pdfium, (buffer, bytes) => pdfium.FPDFFont_GetBaseFontName(font, buffer, bytes));
      const flags = font === 0 ? 0 : pdfium.FPDFFont_GetFlags(font);
      const weight = font === 0 ? -1 : pdfium.FPDFFont_GetWeight(font);
      style = fontStyle(name, flags, weight);
      fonts.set(font, style);
    }
    const filled = pdfium.FPDFPageObj_GetFillColor(object, scratch.at(0, 4), scratch.at(1, 4), scratch.at(2, 4), scratch.at(3, 4));
    const color = filled ? `#${hex(scratch.u32(0))}${hex(scratch.u32(1))}${hex(scratch.u32(2))}` : '#000000';
    const mcid = pdfium.FPDFPageObj_GetMarkedContentID(object);
    // The character's size is the font size (Tf) times the text matrix's vertical scale, as pdf.js reports it.
    const scale = pdfium.FPDFPageObj_GetMatrix(object, scratch.ptr) ? Math.hypot(scratch.f32(2), scratch.f32(3)) || Math.hypot(scratch.f32(0), scratch.f32(1)) : 1;
    facts = { font, style, color, mcid, scale, artifact: mcid < 0 && artifacts.has(object), keys: new Map() };
    cache.set(object, facts);
    return facts;
  };
}

const ARTIFACT = 'Artifact';

/**
 * Whether the object is drawn inside marked content named /Artifact (ISO 32000-1 §14.8.2.2): a tagged
 * PDF's running heads, footers, page numbers and backgrounds, which belong to no structure element.
 */
function markedArtifact(pdfium: Pdfium, scratch: Scratch, object: number): boolean {
  const count = pdfium.FPDFPageObj_CountMarks(object);
  for (let i = 0; i < count; i += 1) {
    const mark = pdfium.FPDFPageObj_GetMark(object, i);
    // The name as UTF-16LE into the scratch's last 32 bytes, its length (bytes, terminator included) into slot 6.
    if (mark === 0 || !pdfium.FPDFPageObjMark_GetName(mark, scratch.at(1, 32), 32, scratch.at(6, 4))) continue;
    const bytes = scratch.u32(6);
    if (bytes !== 2 * (ARTIFACT.length + 1)) continue;
    let name = '';
    for (let c = 0; c < ARTIFACT.length; c += 1) name += String.fromCharCode(scratch.u16(16 + c));
    if (name === ARTIFACT) return true;
  }
  return false;
}

/** fpdf_edit.h: FPDF_PAGEOBJ_TEXT and FPDF_PAGEOBJ_FORM. */
const TEXT_OBJECT = 1;
const FORM_OBJECT = 5;
/** Form XObjects nested deeper than this are not walked (a hostile file can nest them without end). */
const MAX_FORM_DEPTH = 12;

/**
 * The text objects drawn as /Artifact: marked so themselves, or inside a form XObject whose drawing is
 * (a slide master's running title and footer, drawn once as a form and placed on every page).
 */
function artifactTexts(pdfium: Pdfium, scratch: Scratch, page: number): Set<number> {
  const found = new Set<number>();
  const walk = (object: number, inArtifact: boolean, depth: number) => {
    const type = pdfium.FPDFPageObj_GetType(object);
    if (type !== TEXT_OBJECT && type !== FORM_OBJECT) return;
    const artifact = inArtifact || markedArtifact(pdfium, scratch, object);
    if (type === TEXT_OBJECT) {
      if (artifact) found.add(object);
      return;
    }
    if (depth >= MAX_FORM_DEPTH) return;
    const count = pdfium.FPDFFormObj_CountObjects(object);
    for (let i = 0; i < count; i += 1) walk(pdfium.FPDFFormObj_GetObject(object, i), artifact, depth + 1);
  };
  const count = pdfium.FPDFPage_CountObjects(page);
  for (let i = 0; i < count; i += 1) walk(pdfium.FPDFPage_GetObject(page, i), false, 0);
  return found;
}

/**
 * The page's text runs, in content order (coordinates relative to `origin`, the crop box's corner).
 * Rotated text is grouped along its own direction; its run starts at its first glyph's origin.
 */
export function textRuns(pdfium: Pdfium, page: number, box: { x: number; y: number; width: number; height: number }, fonts: Map<number, FontStyle>): TextRun[] {
  const origin = { x: box.x, y: box.y };
  // As pdf.js did, text wholly outside the visible page (printer's marks beyond the crop box) is left out.
  const chars = readChars(pdfium, page, fonts).filter((c) => c.right > box.x && c.left < box.x + box.width && c.top > box.y && c.bottom < box.y + box.height);
  undoRightToLeftMirroring(chars);
  markFakeBold(pdfium, page, chars);
  return groupRuns(chars, origin);
}

type ReadChar = Char & { key: RunKey; angle: number };

/** The page's characters in content order, generated ones (PDFium's inferred spaces and line ends) left out. */
function readChars(pdfium: Pdfium, page: number, fonts: Map<number, FontStyle>): ReadChar[] {
  const textPage = pdfium.FPDFText_LoadPage(page);
  if (textPage === 0) return [];
  const scratch = new Scratch(pdfium, 64);
  try {
    const facts = objectFacts(pdfium, scratch, fonts, artifactTexts(pdfium, scratch, page));
    const count = pdfium.FPDFText_CountChars(textPage);
    const chars: ReadChar[] = [];
    let picture: { code: number; right: number; y: number } | undefined;
    for (let i = 0; i < count; i += 1) {
      if (pdfium.FPDFText_IsGenerated(textPage, i) === 1) continue;
      const code = pdfium.FPDFText_GetUnicode(textPage, i);
      if (code === 0 || code === 0x0d || code === 0x0a || code === 0xfffe) continue;
      // PDFium marks a hyphen that ends a line with U+0002; it is the hyphen the page shows.
      const object = pdfium.FPDFText_GetTextObject(textPage, i);
      const fact = facts(object);
      pdfium.FPDFText_GetCharOrigin(textPage, i, scratch.at(0), scratch.at(1));
      const [x, y] = [scratch.f64(0), scratch.f64(1)];
      const hasBox = pdfium.FPDFText_GetLooseCharBox(textPage, i, scratch.ptr + 16);
      // FS_RECTF: left, top, right, bottom (floats).
      const [left, top, right, bottom] = hasBox ? [scratch.f32(4), scratch.f32(5), scratch.f32(6), scratch.f32(7)] : [x, y, x, y];
      const size = pdfium.FPDFText_GetFontSize(textPage, i) * fact.scale;
      const angle = pdfium.FPDFText_GetCharAngle(textPage, i);
      // A dingbat's code is a picture; so is the empty twin a layout program sets at its right edge in
      // the text font (table-as-picture's bullets: "y" in DingbatsTwo, then "y" of no width in Myriad).
      const twin = picture !== undefined && code === picture.code && right - left < 0.01 && Math.abs(x - picture.right) < 0.5 && Math.abs(y - picture.y) < 0.5;
      const shown = code === 0x02 ? 0x2d : fact.style.dingbats || twin ? pictureCode(code) : code;
      picture = fact.style.dingbats && shown !== code ? { code, right: Math.max(left, right), y } : twin ? picture : undefined;
      const text = String.fromCodePoint(shown);
      // One key per object and size, shared by its characters (keys are compared field by field, never changed).
      const rounded = Math.round(size * 100) / 100;
      let key = fact.keys.get(rounded);
      if (!key) fact.keys.set(rounded, (key = { style: fact.style, font: fact.font, size: rounded, color: fact.color, mcid: fact.mcid, artifact: fact.artifact }));
      chars.push({ text, x, y, left: Math.min(left, right), right: Math.max(left, right), bottom: Math.min(bottom, top), top: Math.max(bottom, top), size, object, rtl: isRtl(shown), key, angle });
    }
    return chars;
  } finally {
    scratch.free();
    pdfium.FPDFText_ClosePage(textPage);
  }
}

/**
 * A dingbat font's code that reads as a letter, digit or punctuation mark (Allumi's DingbatsTwo draws
 * its list bullet at "y", Wingdings its check mark at "ü") is a picture, not that character: issue 42,
 * "list bullets and other symbol glyphs … never sent to the engine, and not read as the letters its
 * codes map to". It becomes a private-use code (U+E000 + the code), one no reader names — as the
 * codes of a symbol font without a ToUnicode map read — so layout sees no word and the translation
 * keeps the glyph as drawn (translate/overlay/symbols.ts, translate/verbatim.ts). A code the font's
 * map names as a symbol of its own (•, ✓, ■ at U+2000 and on) is left as it is.
 */
const pictureCode = (code: number) => (code > 0x20 && code <= 0xff && code !== 0xa0 && code !== 0xad ? PICTURE_CODES + code : code);

/** A copy drawn this close (points) to the text it repeats makes it look bold. */
const FAKE_BOLD_OFFSET = 1.5;

/**
 * Text drawn twice, the second copy shifted a hair (Word's and WPS's bold for fonts without a bold
 * face, common in Chinese documents), is bold. PDFium keeps one copy's characters and drops the
 * other's, so pdf.js's sign of it (the run drawn twice, layout/lines.ts) is gone: a top-level text
 * object none of whose characters were kept, lying on one that was, marks the kept one's characters bold.
 */
function markFakeBold(pdfium: Pdfium, page: number, chars: ReadChar[]): void {
  const kept = new Set(chars.map((c) => c.object));
  const scratch = new Scratch(pdfium, 16);
  try {
    const bounds = (object: number) => (pdfium.FPDFPageObj_GetBounds(object, scratch.at(0, 4), scratch.at(1, 4), scratch.at(2, 4), scratch.at(3, 4)) ? [scratch.f32(0), scratch.f32(1), scratch.f32(2), scratch.f32(3)] : undefined);
    const keptBoxes: Array<[number, number[]]> = [];
    const dropped: number[][] = [];
    const count = pdfium.FPDFPage_CountObjects(page);
    for (let i = 0; i < count; i += 1) {
      const object = pdfium.FPDFPage_GetObject(page, i);
      if (pdfium.FPDFPageObj_GetType(object) !== 1) continue;
      const box = bounds(object);
      if (!box) continue;
      if (kept.has(object)) keptBoxes.push([object, box]);
      else dropped.push(box);
    }
    if (dropped.length === 0) return;
    const bold = new Set<number>();
    for (const [object, box] of keptBoxes) {
      if (dropped.some((d) => box.every((v, k) => Math.abs(v - (d[k] ?? Infinity)) <= FAKE_BOLD_OFFSET) && !box.every((v, k) => v === d[k]))) bold.add(object);
    }
    for (const c of chars) if (bold.has(c.object) && !c.key.style.bold) c.key = { ...c.key, style: { ...c.key.style, bold: true } };
  } finally {
    scratch.free();
  }
}

/** Bracket pairs Unicode mirrors (BidiMirroring.txt, the ones text uses). */
const MIRRORED: Record<string, string> = { '(': ')', ')': '(', '[': ']', ']': '[', '{': '}', '}': '{', '<': '>', '>': '<', '«': '»', '»': '«', '‹': '›', '›': '‹' };

/**
 * PDFium puts right-to-left text in logical order itself, and on the way mirrors brackets and spells
 * some files' lam-alef ligature backwards (alef, lam). Word and PowerPoint map a glyph to the
 * character typed (layout/bidi.ts: "brackets keep the character the PDF gives"), and layout/bidi.ts
 * expects each run's text as pdf.js gave it: so a bracket PDFium laid right to left (a right-to-left
 * letter after it stands to its left, or one before it to its right) gets its character back, and a
 * lam-alef its order.
 */
function undoRightToLeftMirroring(chars: ReadChar[]): void {
  const sameLine = (a: ReadChar, b: ReadChar) => Math.abs(a.y - b.y) <= SAME_BASELINE * Math.max(a.size, 1) && Math.abs(a.angle) < 1e-3 && Math.abs(b.angle) < 1e-3;
  // The index of the nearest character that is not a space, `step` = −1 before, +1 after.
  const neighbour = (i: number, step: number) => {
    for (let k = i + step; k >= 0 && k < chars.length; k += step) if ((chars[k] as ReadChar).text.trim() !== '') return k;
    return -1;
  };
  // Laid right to left: a right-to-left letter (or a bracket already found laid so) next to it in
  // reading order stands on the far side.
  const laidLeft = new Set<number>();
  const rightToLeft = (k: number) => k >= 0 && ((chars[k] as ReadChar).rtl || laidLeft.has(k));
  const leftward = (i: number) => {
    const [b, a] = [neighbour(i, -1), neighbour(i, 1)];
    const [c, before, after] = [chars[i] as ReadChar, chars[b], chars[a]];
    const tol = 0.5;
    return (after !== undefined && rightToLeft(a) && sameLine(c, after) && after.right <= c.left + tol && after.left < c.left - tol) || (before !== undefined && rightToLeft(b) && sameLine(c, before) && before.left >= c.right - tol && before.right > c.right + tol);
  };
  for (let i = 0; i < chars.length; i += 1) {
    const c = chars[i] as ReadChar;
    const mirror = MIRRORED[c.text];
    if (!mirror || !leftward(i)) continue;
    c.text = mirror;
    laidLeft.add(i);
  }
  // Lam-alef, the ligature every Arabic font has, is lam then alef in reading order: PDFium gives
  // its two letters the glyph's one box and, for some files, the wrong way round.
  for (let i = 0; i + 1 < chars.length; i += 1) {
    const [a, b] = [chars[i] as ReadChar, chars[i + 1] as ReadChar];
    if (ALEF.test(a.text) && b.text === LAM && a.left === b.left && a.right === b.right && a.y === b.y) [a.text, b.text] = [b.text, a.text];
  }
}

const LAM = '\u0644';
/** Alef and its forms with madda and hamza (U+0622, U+0623, U+0625, U+0627). */
const ALEF = /^[\u0622\u0623\u0625\u0627]$/u;

/** Characters grouped into runs: a run goes on while the font, colour and MCID stay and the gap is no wider than a word space. */
function groupRuns(chars: ReadChar[], origin: { x: number; y: number }): TextRun[] {
  const runs: TextRun[] = [];
  let run: { key: RunKey; chars: Char[]; angle: number } | undefined;
  let previous: Char | undefined;
  let spaced = false;
  const close = (next: Char | undefined, nextKey: RunKey | undefined) => {
    if (!run) return;
    const made = toRun(run.chars, run.key, origin, run.angle);
    // pdf.js marks a run as ending its line when the same font goes on, on another line (layout/lines.ts
    // then cuts the row at a narrower gap to its right). A right-to-left run ends its line at its left
    // end, so the gap to its right is inside the line: it is not marked.
    if (made && !run.chars.some((c) => c.rtl) && next && nextKey && nextKey.font === run.key.font && Math.abs(next.y - (run.chars.at(-1)?.y ?? next.y)) > SAME_BASELINE * run.key.size) made.hasEOL = true;
    if (made) runs.push(made);
    run = undefined;
  };
  for (const char of chars) {
    const { key, angle } = char;
    // As pdf.js does, a space character is not placed itself: the gap it leaves decides between a
    // word space and a new run, measured from the last glyph that is not a space.
    if (char.text.trim() === '') {
      spaced = true;
      continue;
    }
    const join = run && previous && sameKey(run.key, key) && Math.abs(run.angle - angle) < 0.01 ? joining(previous, char, angle) : 'split';
    if (join === 'split') {
      close(char, key);
      run = { key, chars: [char], angle };
    } else {
      if (join === 'space' || spaced) run?.chars.push({ ...char, text: ' ', right: char.left });
      run?.chars.push(char);
    }
    spaced = false;
    previous = char;
  }
  close(undefined, undefined);
  return runs;
}

const sameKey = (a: RunKey, b: RunKey) => a.artifact === b.artifact && a.font === b.font && Math.abs(a.size - b.size) <= 0.01 * Math.max(a.size, b.size) && a.color === b.color && a.mcid === b.mcid;

/** How `char` continues the run ending in `last`: closely, after a word space, or not at all. */
function joining(last: Char, char: Char, angle: number): 'close' | 'space' | 'split' {
  // FPDFText_GetCharAngle measures clockwise (text running up the page reads 3π/2): the direction is (cos, −sin).
  const [cos, sin] = [Math.cos(angle), -Math.sin(angle)];
  const along = (px: number, py: number) => px * cos + py * sin;
  const across = (px: number, py: number) => -px * sin + py * cos;
  const em = Math.max(last.size, 1);
  if (Math.abs(across(char.x, char.y) - across(last.x, last.y)) > SAME_BASELINE * em) return 'split';
  const upright = Math.abs(sin) < 1e-3;
  // Right-to-left letters are drawn leftwards: the next one ends where the last one began.
  const backwards = upright && (char.rtl || last.rtl) && char.right <= last.left + BACK_GAP * em;
  // Turned text advances along its direction: the glyph box's extent that way is its advance.
  const advance = (c: Char) => (c.right - c.left) * Math.abs(cos) + (c.top - c.bottom) * Math.abs(sin);
  const gap = backwards ? last.left - char.right : upright ? char.left - last.right : along(char.x, char.y) - along(last.x, last.y) - advance(last);
  // A glyph starting inside the last one's box is part of it (the letters of a ligature) or drawn over it.
  if (upright && !backwards && gap < 0 && char.left >= last.left - 0.01 * em) return 'close';
  if (gap > SPLIT_GAP * em || gap < -BACK_GAP * em) return 'split';
  return gap > SPACE_MIN * em ? 'space' : 'close';
}

function toRun(chars: Char[], key: RunKey, origin: { x: number; y: number }, angle: number): TextRun | undefined {
  const text = chars.map((c) => c.text).join('');
  const first = chars[0];
  if (!first || text.trim() === '') return undefined;
  const upright = Math.abs(Math.sin(angle)) < 1e-3 && Math.cos(angle) > 0;
  const left = upright ? Math.min(...chars.map((c) => Math.min(c.x, c.left))) : first.x;
  const [cos, sin] = [Math.abs(Math.cos(angle)), Math.abs(Math.sin(angle))];
  const width = upright ? Math.max(...chars.map((c) => c.right)) - left : chars.reduce((sum, c) => sum + (c.text === ' ' ? 0 : (c.right - c.left) * cos + (c.top - c.bottom) * sin), 0);
  const { style } = key;
  return {
    text,
    x: left - origin.x,
    y: first.y - origin.y,
    width,
    size: key.size,
    bold: style.bold,
    hasEOL: false,
    italic: style.italic,
    mono: style.mono || (style.fixedPitch && !CJK.test(text)),
    ...(style.math ? { math: true } : {}),
    height: key.size,
    color: key.color,
    ...(key.mcid >= 0 ? { mcid: key.mcid } : {}),
    ...(key.artifact ? { artifact: true } : {}),
    ...directionOf(angle),
  };
}

/** FPDFText_GetCharAngle (clockwise radians) as a writing direction counter-clockwise, to the nearest quarter turn. */
function directionOf(angle: number): { direction?: 90 | 180 | 270 } {
  const degrees = (((360 - (angle * 180) / Math.PI) % 360) + 360) % 360;
  const quarter = (Math.round(degrees / 90) % 4) * 90;
  return quarter === 0 ? {} : { direction: quarter as 90 | 180 | 270 };
}
