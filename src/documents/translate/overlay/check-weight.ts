// The check's count of whole-block bold (issue 42, "Style exactly as the source"): the styled-words
// figure counts the inline spans the parse found, so a block bold from end to end — a question set
// in MyriadBd — whose translation is set regular went uncounted when the parse missed its weight.
// Here the weight is read from both PDFs as the reader draws them (each run's font): a source
// block whose every run is bold is a block of bold words, and they are lost where its translated
// runs are mostly regular. (Slant is not read back: a synthetic italic is a skewed regular face.)
import type { Box, SizedRun } from './check.ts';

/** Whether a run's centre stands inside a region (a point of slack): the check's test of which block a run belongs to. */
export const centreIn = (r: Box, region: Box) => { const x = (r.xMin + r.xMax) / 2; const y = (r.yMin + r.yMax) / 2; return x >= region.xMin - 1 && x <= region.xMax + 1 && y >= region.yMin - 1 && y <= region.yMax + 1; };

const letters = (r: SizedRun) => (r.text ?? '').replace(/[^\p{L}\p{N}]/gu, '').length;
const wordsOf = (r: SizedRun) => (r.text ?? '').split(/\s+/u).filter((w) => /[\p{L}\p{N}]/u.test(w)).length;

/**
 * Words of the source's wholly bold blocks (`regions`, top-down) and those of them whose translation
 * is not bold: the runs on the block's rows, from its left edge, mostly regular. A block whose
 * translation stands elsewhere (moved, or kept as drawn away from its rows) counts neither way.
 */
export function boldBlocks(regions: Box[], source: SizedRun[], translated: SizedRun[]): { words: number; lost: number; where: number[] } {
  // A translated run is its block's when it stands on the block's rows, starting inside its width and
  // right of its left edge and of no other's nearer (a callout's text beside a bold label is the callout's).
  const owner = (r: Box) => {
    const y = (r.yMin + r.yMax) / 2;
    let found: Box | undefined;
    for (const region of regions) if (y >= region.yMin - 1 && y <= region.yMax + 1 && region.xMin <= r.xMin + 1 && r.xMin < region.xMax && (!found || region.xMin > found.xMin)) found = region;
    return found;
  };
  const owned = new Map<Box, SizedRun[]>();
  for (const r of translated) { const region = letters(r) > 0 ? owner(r) : undefined; if (region) owned.set(region, [...(owned.get(region) ?? []), r]); }
  let words = 0;
  let lost = 0;
  const where: number[] = [];
  for (const region of regions) {
    const runs = source.filter((r) => letters(r) > 0 && centreIn(r, region));
    if (runs.length === 0 || !runs.every((r) => r.bold)) continue;
    const mine = owned.get(region) ?? [];
    if (mine.length === 0) continue;
    const count = runs.reduce((n, r) => n + wordsOf(r), 0);
    words += count;
    const boldLetters = mine.reduce((n, r) => n + (r.bold ? letters(r) : 0), 0);
    if (boldLetters * 2 < mine.reduce((n, r) => n + letters(r), 0)) { lost += count; where.push(Math.round(region.yMin)); }
  }
  return { words, lost, where };
}
