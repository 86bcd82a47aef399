// Text inside pictures: the labels a drawing or a photo carries ("Nut case", "Tightened nut") are
// part of the picture. Left in the flow they become one-word paragraphs or, set larger than the
// body, headings; they also hide the page's columns from the reading order.
import type { Block, BoundingBox } from '../document.ts';
import type { ImageRegion } from './geometry.ts';

/** A picture covering more than this share of the page is a background (a scan, a designed page), not a figure. */
const MAX_PICTURE_SHARE = 0.6;
/** Labels are short: at most this many lines… */
const MAX_LABEL_LINES = 3;
/** …and this many characters. */
const MAX_LABEL_CHARS = 80;
/**
 * A picture holding labels is much larger than any one of them; text on a box hardly larger than
 * itself is a heading bar or a highlighted note, not a label.
 */
const MIN_PICTURE_TO_LABEL = 3;
/** A label may stick out of its picture by this much (em of its size): a caption bar on a photo's edge. */
const SLACK_EM = 0.4;

const area = (b: BoundingBox) => Math.max(0, b.r - b.l) * Math.max(0, b.t - b.b);
const inside = (inner: BoundingBox, outer: BoundingBox, slack: number) =>
  inner.l >= outer.l - slack && inner.r <= outer.r + slack && inner.b >= outer.b - slack && inner.t <= outer.t + slack;

/** Whether a block is a label drawn inside one of the page's pictures. */
export function isPictureText(block: Block, images: ImageRegion[], pageArea: number): boolean {
  if (block.label !== 'text' && block.label !== 'list_item') return false;
  if (block.text.length > MAX_LABEL_CHARS) return false;
  if ((block.bbox.t - block.bbox.b) / (1.2 * Math.max(block.fontSize, 1)) > MAX_LABEL_LINES) return false;
  const height = block.bbox.t - block.bbox.b;
  return images.some(
    (image) => area(image.bbox) <= MAX_PICTURE_SHARE * pageArea && image.bbox.t - image.bbox.b >= MIN_PICTURE_TO_LABEL * height && inside(block.bbox, image.bbox, Math.max(2, SLACK_EM * block.fontSize)),
  );
}

/** The page's blocks with picture labels marked (`inPicture`), and the rest apart for the reading order. */
export function separatePictureText(blocks: Block[], images: ImageRegion[], pageArea: number): { flow: Block[]; labels: Block[] } {
  const flow: Block[] = [];
  const labels: Block[] = [];
  for (const block of blocks) {
    if (isPictureText(block, images, pageArea)) labels.push({ ...block, inPicture: true });
    else flow.push(block);
  }
  return { flow, labels: labels.sort((a, b) => b.bbox.t - a.bbox.t || a.bbox.l - b.bbox.l) };
}
