// One page through the stages: runs → (tables) → lines → blocks → reading order.
import type { Page } from '../document.ts';
import { groupBlocks } from './blocks.ts';
import { readingOrder } from './columns.ts';
import type { PageContent } from './geometry.ts';
import { groupLines } from './lines.ts';
import { separatePictureText } from './pictures.ts';
import { findTables } from './tables/find.ts';
import { layoutTaggedPage } from './tagged.ts';

/** A page's blocks in reading order, labelled as far as one page can tell: text, list_item, table. */
export function layoutPage(content: PageContent): Page {
  // A tagged page whose tags can be trusted takes its roles and reading order from them (issue 31).
  const tagged = content.structure ? layoutTaggedPage(content) : undefined;
  if (tagged) return tagged;
  const { tables, rest } = findTables(content.rulings, content.runs);
  const blocks = [...groupBlocks(groupLines(rest), { ocr: content.textSource === 'ocr' }), ...tables];
  // A picture's labels follow the page's reading order, which they would otherwise disturb.
  const { flow, labels } = separatePictureText(blocks, content.images ?? [], content.width * content.height);
  return { pageNo: content.pageNo, width: content.width, height: content.height, blocks: [...readingOrder(flow), ...labels] };
}
