// A page's characters, as PDFium's text page lists them in content order, grouped into the text runs
// the layout stages read: one run is a stretch of one line in one font, size, colour and marked-content
// id, cut where the gap is wider than a word space — the grouping pdf.js made (its text items),
// so layout/lines.ts joins and splits them as before.
import type { TextRun } from '../layout/geometry.ts';
import { fontStyle, type FontStyle } from './fonts.ts';
import { readUtf8, Scratch, type Pdfium } from './pdfium.ts';

/** pdf.js's thresholds, in em of the font size (its text_layer builder): a gap above SPACE_MIN is a word space … */
const SPACE_MIN = 0.102;
/** … one above SPLIT_GAP starts a new run (a column or a tab stop), as does a step back of more than BACK_GAP. */
const SPLIT_GAP = 0.6;
const BACK_GAP = 0.2;
/** Characters whose baselines differ by less than this (in em) are on one line. */
const SAME_BASELINE = 0.2;

/** One character of the text page (page points, unrotated, before the crop box origin is taken off). */
type Char = { text: string; x: number; y: number; left: number; right: number; size: number; object: number; rtl: boolean };

type RunKey = { style: FontStyle; font: number; size: number; color: string; mcid: number };

const RTL = /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]/u;

const hex = (n: number) => Math.max(0, Math.min(255, n)).toString(16).padStart(2, '0');

/** Per text object: its font (and that font's style), fill colour and marked-content id, read once. */
function objectFacts(pdfium: Pdfium, scratch: Scratch, fonts: Map<number, FontStyle>) {
  const cache = new Map<number, { font: number; style: FontStyle; color: string; mcid: number; scale: number }>();
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
    facts = { font, style, color, mcid, scale };
    cache.set(object, facts);
    return facts;
  };
}

/**
 * The page's text runs, in content order (coordinates relative to `origin`, the crop box's corner).
 * Rotated text is grouped along its own direction; its run starts at its first glyph's origin.
 */
export function textRuns(pdfium: Pdfium, page: number, origin: { x: number; y: number }, fonts: Map<number, FontStyle>): TextRun[] {
  const textPage = pdfium.FPDFText_LoadPage(page);
  if (textPage === 0) return [];
  const scratch = new Scratch(pdfium, 64);
  try {
    const facts = objectFacts(pdfium, scratch, fonts);
    const count = pdfium.FPDFText_CountChars(textPage);
    const runs: TextRun[] = [];
    let run: { key: RunKey; chars: Char[]; angle: number } | undefined;
    let previous: Char | undefined;
    let spaced = false;
    const close = (next: Char | undefined, nextKey: RunKey | undefined) => {
      if (!run) return;
      const made = toRun(run.chars, run.key, origin, run.angle);
      // pdf.js marks a run as ending its line when the same font goes on, on another line (layout/lines.ts uses it).
      if (made && next && nextKey && nextKey.font === run.key.font && Math.abs(next.y - (run.chars.at(-1)?.y ?? next.y)) > SAME_BASELINE * run.key.size) made.hasEOL = true;
      if (made) runs.push(made);
      run = undefined;
    };
    for (let i = 0; i < count; i += 1) {
      if (pdfium.FPDFText_IsGenerated(textPage, i) === 1) continue;
      const code = pdfium.FPDFText_GetUnicode(textPage, i);
      if (code === 0 || code === 0x0d || code === 0x0a || code === 0xfffe) continue;
      // PDFium marks a hyphen that ends a line with U+0002; it is the hyphen the page shows.
      const shown = code === 0x02 ? 0x2d : code;
      const object = pdfium.FPDFText_GetTextObject(textPage, i);
      const fact = facts(object);
      pdfium.FPDFText_GetCharOrigin(textPage, i, scratch.at(0), scratch.at(1));
      const [x, y] = [scratch.f64(0), scratch.f64(1)];
      const hasBox = pdfium.FPDFText_GetLooseCharBox(textPage, i, scratch.ptr + 16);
      // FS_RECTF: left, top, right, bottom (floats).
      const left = hasBox ? scratch.f32(4) : x;
      const right = hasBox ? scratch.f32(6) : x;
      const size = pdfium.FPDFText_GetFontSize(textPage, i) * fact.scale;
      const angle = pdfium.FPDFText_GetCharAngle(textPage, i);
      const text = String.fromCodePoint(shown);
      const char: Char = { text, x, y, left: Math.min(left, right), right: Math.max(left, right), size, object, rtl: RTL.test(text) };
      const key: RunKey = { style: fact.style, font: fact.font, size: Math.round(size * 100) / 100, color: fact.color, mcid: fact.mcid };
      // As pdf.js does, a space character is not placed itself: the gap it leaves decides between a
      // word space and a new run, measured from the last glyph that is not a space.
      if (text.trim() === '') {
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
  } finally {
    scratch.free();
    pdfium.FPDFText_ClosePage(textPage);
  }
}

// Not the size: pdf.js kept one font's glyphs together across a size change (a run's size is its first glyph's).
const sameKey = (a: RunKey, b: RunKey) => a.font === b.font && a.color === b.color && a.mcid === b.mcid;

/** How `char` continues the run ending in `last`: closely, after a word space, or not at all. */
function joining(last: Char, char: Char, angle: number): 'close' | 'space' | 'split' {
  const [cos, sin] = [Math.cos(angle), Math.sin(angle)];
  const along = (px: number, py: number) => px * cos + py * sin;
  const across = (px: number, py: number) => -px * sin + py * cos;
  const em = Math.max(last.size, 1);
  if (Math.abs(across(char.x, char.y) - across(last.x, last.y)) > SAME_BASELINE * em) return 'split';
  const upright = Math.abs(sin) < 1e-3;
  // Right-to-left letters are drawn leftwards: the next one ends where the last one began.
  const backwards = upright && (char.rtl || last.rtl) && char.right <= last.left + BACK_GAP * em;
  const gap = backwards ? last.left - char.right : upright ? char.left - last.right : along(char.x, char.y) - along(last.x, last.y) - Math.abs(last.right - last.left);
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
  const width = upright ? Math.max(...chars.map((c) => c.right)) - left : chars.reduce((sum, c) => sum + (c.text === ' ' ? 0 : c.right - c.left), 0);
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
    mono: style.mono,
    ...(style.math ? { math: true } : {}),
    height: key.size,
    color: key.color,
    ...(key.mcid >= 0 ? { mcid: key.mcid } : {}),
  };
}
