// One page through the stages: runs → (tables) → lines → blocks → reading order.
import type { Block, BoundingBox, Page } from '../document.ts';
import { groupBlocks } from './blocks.ts';
import { readingOrder } from './columns.ts';
import type { PageContent, TextRun } from './geometry.ts';
import { groupLines } from './lines.ts';
import { separatePictureText } from './pictures.ts';
import { findTables } from './tables/find.ts';
import { isListing, panelOf } from './tables/panels.ts';
import { judgeTags, layoutTaggedPage } from './tagged.ts';
import { textTurn, turnContent, unturnPage } from './turned.ts';
import { colourCells } from './styles.ts';

/** Artifacts holding more than this share of a page's letters are not its furniture but a generator marking (nearly) everything so. */
const MAX_ARTIFACT_SHARE = 0.9;

const letters = (runs: TextRun[]) => runs.reduce((n, r) => n + r.text.replace(/\s/gu, '').length, 0);

/**
 * A page's blocks in reading order, labelled as far as one page can tell: text, list_item, table,
 * and page_header / page_footer for what a tagged PDF marks as /Artifact — spec (issue 41): "Tagged
 * `Artifact`s are furniture too". The artifacts are laid out on their own, so they neither count
 * against the tags' share of the page's text nor join a body block, and never become headings.
 */
export function layoutPage(content: PageContent): Page {
  const artifacts = content.runs.filter((run) => run.artifact);
  if (artifacts.length === 0 || letters(artifacts) > MAX_ARTIFACT_SHARE * letters(content.runs)) return layoutBody(content);
  const body = layoutBody({ ...content, runs: content.runs.filter((run) => !run.artifact) });
  const { structure: _, ...untagged } = content;
  const furniture = layoutBody({ ...untagged, runs: artifacts, rulings: [], images: [] }).blocks.map((block): Block => ({ ...block, label: (block.bbox.t + block.bbox.b) / 2 > content.height / 2 ? 'page_header' : 'page_footer' }));
  return { ...body, blocks: [...furniture.filter((b) => b.label === 'page_header'), ...body.blocks, ...furniture.filter((b) => b.label === 'page_footer')] };
}

function layoutBody(content: PageContent): Page {
  // A tagged page whose tags can be trusted takes its roles and reading order from them (issue 31).
  const tagged = content.structure ? layoutTaggedPage(content) : undefined;
  if (tagged) return tagged;
  // Text running up or down the page is laid out turned, its boxes turned back after.
  const turn = textTurn(content.runs);
  const page = unturnPage(layoutUpright(turnContent(content, turn)), turn, content);
  const verdict = content.structure ? judgeTags(content) : undefined;
  return verdict && !verdict.usable && verdict.allP ? { ...page, tags: 'all-p' } : page;
}

function layoutUpright(content: PageContent): Page {
  const { tables, rest, panels, figures } = findTables(content.rulings, content.runs, content);
  // The text of each ruled panel is laid out on its own: its lines never run on into the next panel.
  const flows = new Map<number, TextRun[]>();
  for (const run of rest) {
    const panel = panelOf(panels, run);
    flows.set(panel, [...(flows.get(panel) ?? []), run]);
  }
  const ocr = content.textSource === 'ocr';
  const blocks = [...[...flows.entries()].flatMap(([panel, runs]) => groupBlocks(groupLines(runs, { readAcross: panel >= 0 && isListing(runs) }), { ocr })), ...colourCells(tables, content.runs)];
  // A picture's labels follow the page's reading order, which they would otherwise disturb.
  const { flow, labels } = separatePictureText(blocks, [...(content.images ?? []), ...(figures ?? []).map((bbox) => ({ bbox }))], content.width * content.height);
  return { pageNo: content.pageNo, width: content.width, height: content.height, blocks: [...panelOrder(flow, panels), ...labels] };
}

/**
 * Reading order with ruled panels read one after the other, each top to bottom (a frame's cells in
 * rows, left to right): the rest of the page is ordered as usual, and each panel's blocks go in
 * before the first block that starts below the panel's top.
 */
function panelOrder(blocks: Block[], panels: BoundingBox[]): Block[] {
  if (panels.length === 0) return readingOrder(blocks);
  const inPanel = new Map<number, Block[]>();
  const outside: Block[] = [];
  for (const block of blocks) {
    const { l, r, t, b } = block.bbox;
    const at = panels.findIndex((p) => (l + r) / 2 > p.l && (l + r) / 2 < p.r && (t + b) / 2 > p.b && (t + b) / 2 < p.t);
    if (at < 0) outside.push(block);
    else inPanel.set(at, [...(inPanel.get(at) ?? []), block]);
  }
  const ordered = readingOrder(outside);
  const out: Block[] = [];
  let next = 0;
  panels.forEach((panel, i) => {
    while (next < ordered.length && (ordered[next]?.bbox.t ?? 0) > panel.t) out.push(ordered[next++] as Block);
    out.push(...readingOrder(inPanel.get(i) ?? []));
  });
  return [...out, ...ordered.slice(next)];
}
