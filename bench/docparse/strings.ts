// String distances of the opendataloader-bench evaluator, which takes them from rapidfuzz:
// `fuzz.ratio` (normalised indel similarity, src/evaluator_reading_order.py) and
// `Levenshtein.distance` (src/evaluator_table.py, src/evaluator_heading_level.py). Both are computed
// here with the bit-parallel algorithms rapidfuzz itself uses, so whole documents compare in
// milliseconds: the LCS of Allison–Dix / Hyyrö (indel = |a| + |b| − 2·LCS) and Myers' / Hyyrö's
// block algorithm for Levenshtein (as in edlib's calculateBlock). Strings are compared by Unicode code
// point, as Python compares `str`.

const WORD = 32;

/** Code points of a string (Python's str indexing). */
export const codePoints = (text: string): number[] => Array.from(text, (c) => c.codePointAt(0) ?? 0);

/** For each code point of `pattern`, the bit mask of its positions, in 32-bit blocks. */
function patternMasks(pattern: number[]): Map<number, Uint32Array> {
  const blocks = Math.ceil(pattern.length / WORD);
  const masks = new Map<number, Uint32Array>();
  pattern.forEach((c, i) => {
    let mask = masks.get(c);
    if (!mask) masks.set(c, (mask = new Uint32Array(blocks)));
    mask[i >>> 5] = ((mask[i >>> 5] ?? 0) | (1 << (i & 31))) >>> 0;
  });
  return masks;
}

/** Length of the longest common subsequence (bit-parallel, Hyyrö 2004; rapidfuzz's `lcs_seq`). */
export function lcsLength(a: string | number[], b: string | number[]): number {
  let s1 = typeof a === 'string' ? codePoints(a) : a;
  let s2 = typeof b === 'string' ? codePoints(b) : b;
  if (s1.length > s2.length) [s1, s2] = [s2, s1];
  if (s1.length === 0) return 0;
  const blocks = Math.ceil(s1.length / WORD);
  const masks = patternMasks(s1);
  const S = new Uint32Array(blocks).fill(0xffffffff);
  const none = new Uint32Array(blocks);
  for (const c of s2) {
    const M = masks.get(c) ?? none;
    let carry = 0;
    for (let k = 0; k < blocks; k += 1) {
      const s = S[k] ?? 0;
      const u = (s & (M[k] ?? 0)) >>> 0;
      const sum = s + u + carry;
      carry = sum > 0xffffffff ? 1 : 0;
      // S − u never borrows (u ⊆ S), so it is S & ~u.
      S[k] = ((sum >>> 0) | (s & ~u)) >>> 0;
    }
  }
  let lcs = 0;
  for (let i = 0; i < s1.length; i += 1) if (((S[i >>> 5] ?? 0) & (1 << (i & 31))) === 0) lcs += 1;
  return lcs;
}

/** Indel distance (insertions and deletions only). */
export function indelDistance(a: string, b: string): number {
  const s1 = codePoints(a);
  const s2 = codePoints(b);
  return s1.length + s2.length - 2 * lcsLength(s1, s2);
}

/**
 * rapidfuzz's `fuzz.ratio(a, b) / 100`: 1 − indel distance / (|a| + |b|); 1 for two empty strings.
 * This is the "NID" (normalised indel distance similarity) of opendataloader-bench.
 */
export function indelRatio(a: string, b: string): number {
  const s1 = codePoints(a);
  const s2 = codePoints(b);
  const total = s1.length + s2.length;
  if (total === 0) return 1;
  return 1 - (total - 2 * lcsLength(s1, s2)) / total;
}

/** Levenshtein distance, unit costs (Myers 1999 / Hyyrö 2003 block algorithm, after edlib's calculateBlock). */
export function levenshtein(a: string | number[], b: string | number[]): number {
  let pattern = typeof a === 'string' ? codePoints(a) : a;
  let text = typeof b === 'string' ? codePoints(b) : b;
  if (pattern.length > text.length) [pattern, text] = [text, pattern];
  const m = pattern.length;
  if (m === 0) return text.length;
  const blocks = Math.ceil(m / WORD);
  const masks = patternMasks(pattern);
  const none = new Uint32Array(blocks);
  const Pv = new Uint32Array(blocks).fill(0xffffffff);
  const Mv = new Uint32Array(blocks);
  const lastBit = (m - 1) & 31;
  let score = m;
  for (const c of text) {
    const peq = masks.get(c) ?? none;
    let hin = 1; // the top row of the matrix grows by one per column
    for (let k = 0; k < blocks; k += 1) {
      const pv = Pv[k] ?? 0;
      const mv = Mv[k] ?? 0;
      const hinNeg = hin < 0 ? 1 : 0;
      let eq = peq[k] ?? 0;
      const xv = (eq | mv) >>> 0;
      eq = (eq | hinNeg) >>> 0;
      const xh = ((((((eq & pv) >>> 0) + pv) >>> 0) ^ pv) | eq) >>> 0;
      let ph = (mv | ~(xh | pv)) >>> 0;
      let mh = (pv & xh) >>> 0;
      const bit = k === blocks - 1 ? lastBit : 31;
      const hout = ((ph >>> bit) & 1) - ((mh >>> bit) & 1);
      ph = ((ph << 1) | (hin > 0 ? 1 : 0)) >>> 0;
      mh = ((mh << 1) | hinNeg) >>> 0;
      Pv[k] = (mh | ~(xv | ph)) >>> 0;
      Mv[k] = (ph & xv) >>> 0;
      if (k === blocks - 1) score += hout;
      hin = hout;
    }
  }
  return score;
}
