// Code listings set with horizontal rules (an "Example 3-9" query between a rule above and one
// below): code, never a rule-only table. The runs of a listing are marked monospaced, so the text
// flow lays them out as one code block (blocks.ts), kept verbatim.
import type { Ruling, TextRun } from '../geometry.ts';
import { isCodeListing } from '../monospace.ts';

/** Text this far (points) past a rule's ends is still within its width. */
const SLACK = 6;

/** The runs of a listing, marked monospaced in the runs left for the text flow. */
export function markListing(found: { rest: TextRun[] }, runs: TextRun[]): void {
  const listing = new Set(runs);
  found.rest = found.rest.map((run) => (listing.has(run) ? { ...run, mono: true } : run));
}

/**
 * spec (issue 41): "a listing continued from the page before ends at its bottom rule": when all the
 * text over the page's first rule (one bounding no table) lies within the rule's width and is a
 * code listing, it is code — its top rule was on the page before.
 */
export function listingOverFirstRule(first: Ruling | undefined, found: { rest: TextRun[] }): void {
  if (!first) return;
  const over = found.rest.filter((run) => run.y > first.y1);
  const within = over.every((run) => run.x >= first.x1 - SLACK && run.x + run.width <= first.x2 + SLACK);
  if (over.length > 0 && within && isCodeListing(over)) markListing(found, over);
}
