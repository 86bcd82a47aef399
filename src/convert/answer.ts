// A finished conversion → docling-serve's answer: one document as ConvertDocumentResponse, several
// (or a zip target) as `converted_docs.zip`, as docling-serve answers them. The contents are the task's
// own result files (document.md, document.json, document.html, document.txt, pictures/…), with the
// pictures placed as image_export_mode asks; nothing is parsed again.
import type { Readable } from 'node:stream';
import { zipSync } from 'fflate';
import { withImageMode } from '../documents/export/html.ts';
import { resultKey } from '../tasks/tasks.ts';
import type { ConvertContext, DocumentState } from './conversions.ts';
import { documentStatus } from './conversions.ts';
import type { ConversionStatus, ConvertDocumentResponse, ErrorItem, ExportDocumentResponse, ImageExportMode, SignetFormat } from './docling-serve.ts';
import type { AnswerOptions } from './options.ts';

/** The task's result file of each format. */
const FILE_OF: Record<SignetFormat, string> = { md: 'document.md', json: 'document.json', html: 'document.html', text: 'document.txt' };
const EXTENSION_OF: Record<SignetFormat, string> = { md: 'md', json: 'json', html: 'html', text: 'txt' };
/** docling's placeholder for a picture in Markdown and HTML. */
const IMAGE_PLACEHOLDER = '<!-- image -->';

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

const error = (component_type: ErrorItem['component_type'], error_message: string): ErrorItem => ({ component_type, module_name: 'signet', error_message });

/** A document's contents, read from its task's files. */
type Exported = { response: ExportDocumentResponse; status: ConversionStatus; errors: ErrorItem[]; pictures: Map<string, Uint8Array>; seconds: number };

/** "report.pdf" → "report": docling names a document (and its files in a zip) by the file's stem. */
export const stemOf = (filename: string) => (filename.split(/[/\\]/).pop() ?? filename).replace(/\.[^.]*$/, '') || 'document';

/** A picture link of the Markdown or HTML (`pictures/page-1-1.png`, its segments percent-encoded) → its result name. */
function pictureName(link: string): string | undefined {
  try {
    const name = decodeURIComponent(link);
    return /^pictures\/[^/]+\.png$/.test(name) ? name : undefined;
  } catch {
    return undefined;
  }
}

const dataUri = (png: Uint8Array) => `data:image/png;base64,${Buffer.from(png).toString('base64')}`;

/** The Markdown's pictures as image_export_mode asks: a placeholder, the image itself as a data URI, or a link (under `prefix` in a zip). */
function placeMarkdownPictures(content: string, mode: ImageExportMode, pictures: Map<string, Uint8Array>, prefix: string): string {
  return content.replace(/!\[((?:[^\]\\]|\\.)*)\]\(([^)\s]+)\)/g, (whole, alt: string, link: string) => {
    const name = pictureName(link);
    if (name === undefined) return whole;
    if (mode === 'placeholder') return IMAGE_PLACEHOLDER;
    if (mode === 'embedded') return pictures.has(name) ? `![${alt}](${dataUri(pictures.get(name)!)})` : IMAGE_PLACEHOLDER;
    return `![${alt}](${prefix}${link})`;
  });
}

/** The DoclingDocument with its name and its pictures' images as the mode asks (placeholder: no image). */
function placeJsonPictures(json: Record<string, unknown>, name: string, mode: ImageExportMode, pictures: Map<string, Uint8Array>, prefix: string): Record<string, unknown> {
  const items = Array.isArray(json.pictures) ? (json.pictures as Array<Record<string, unknown>>) : [];
  const placed = items.map((picture) => {
    const image = picture.image as { uri?: unknown } | undefined;
    const file = typeof image?.uri === 'string' ? pictureName(image.uri) : undefined;
    if (!image || file === undefined) return picture;
    if (mode === 'placeholder' || (mode === 'embedded' && !pictures.has(file))) {
      const { image: _dropped, ...rest } = picture;
      return rest;
    }
    return { ...picture, image: { ...image, uri: mode === 'embedded' ? dataUri(pictures.get(file)!) : `${prefix}${image.uri}` } };
  });
  return { ...json, name, pictures: placed };
}

/** One document's answer from its task's files (`prefix`: where its pictures sit in a zip). */
async function exportDocument(ctx: ConvertContext, state: DocumentState, answer: AnswerOptions, prefix: string): Promise<Exported> {
  const response: ExportDocumentResponse = { filename: state.document.filename, md_content: null, json_content: null, html_content: null, text_content: null, doctags_content: null };
  const errors: ErrorItem[] = answer.unsupported.map((format) => error('user_input', `Signet does not produce ${format}; ask for md, json, html or text.`));
  const pictures = new Map<string, Uint8Array>();
  const task = state.task;
  if (!task || task.status !== 'finished') {
    const why = 'error' in state.document ? state.document.error : !task ? 'The task of this document was deleted.' : task.status === 'cancelled' ? 'The conversion was cancelled.' : (task.error ?? 'The conversion failed.');
    errors.push(error(task ? 'pipeline' : 'user_input', why));
    const status = documentStatus(state);
    return { response, status: status === 'skipped' ? 'skipped' : 'failure', errors, pictures, seconds: task ? secondsOf(task) : 0 };
  }
  const stored = new Map(task.files.map((f) => [f.name, f]));
  if (answer.imageMode !== 'placeholder' || answer.zip) {
    for (const file of task.files.filter((f) => f.name.startsWith('pictures/'))) {
      pictures.set(file.name, await readAll((await ctx.tasks.objects.get(resultKey(task.id, file.name))).body));
    }
  }
  for (const format of answer.formats) {
    const name = FILE_OF[format];
    if (!stored.has(name)) {
      errors.push(error('document_backend', `This document has no ${format} output (it was converted before Signet wrote ${name}); convert it again.`));
      continue;
    }
    const text = (await readAll((await ctx.tasks.objects.get(resultKey(task.id, name))).body)).toString('utf8');
    if (format === 'json') response.json_content = placeJsonPictures(JSON.parse(text) as Record<string, unknown>, stemOf(response.filename), answer.imageMode, pictures, prefix);
    else if (format === 'md') response.md_content = placeMarkdownPictures(text, answer.imageMode, pictures, prefix);
    // export/html.ts places an HTML file's pictures for the placeholder and embedded modes; referenced links stay, under the zip's folder.
    else if (format === 'html') response.html_content = answer.imageMode === 'referenced' ? text.replaceAll('<img src="pictures/', `<img src="${prefix}pictures/`) : await withImageMode(text, answer.imageMode, async (file) => pictures.get(file));
    else response.text_content = text;
  }
  return { response, status: errors.length > 0 ? 'partial_success' : 'success', errors, pictures, seconds: secondsOf(task) };
}

/** How long the document took, from upload to result, in seconds. */
function secondsOf(task: { created_at: string; finished_at: string | null }): number {
  return task.finished_at ? Math.max(0, (Date.parse(task.finished_at) - Date.parse(task.created_at)) / 1000) : 0;
}

/** docling-serve's answer: JSON for one document in the body, else the zip of every document's files. */
export async function conversionAnswer(ctx: ConvertContext, states: DocumentState[], answer: AnswerOptions): Promise<{ kind: 'json'; body: ConvertDocumentResponse } | { kind: 'zip'; bytes: Uint8Array }> {
  if (states.length === 1 && !answer.zip) {
    const only = await exportDocument(ctx, states[0]!, answer, '');
    return { kind: 'json', body: { document: only.response, status: only.status, errors: only.errors, processing_time: only.seconds, timings: {} } };
  }
  // As docling-serve writes its zip: per converted document `<stem>.md`, `.json`, `.html`, `.txt`;
  // referenced pictures beside them (here under `<stem>/pictures/`); nothing for a failed document.
  const entries: Record<string, Uint8Array> = {};
  const used = new Set<string>();
  for (const state of states) {
    let stem = stemOf(state.document.filename);
    for (let n = 1; used.has(stem); n += 1) stem = `${stemOf(state.document.filename)}_${n}`;
    used.add(stem);
    const exported = await exportDocument(ctx, state, answer, `${stem}/`);
    if (exported.status === 'failure' || exported.status === 'skipped') continue;
    const r = exported.response;
    const contents: Record<SignetFormat, string | null> = { md: r.md_content, json: r.json_content ? `${JSON.stringify(r.json_content, null, 2)}\n` : null, html: r.html_content, text: r.text_content };
    for (const format of answer.formats) {
      const content = contents[format];
      if (content !== null) entries[`${stem}.${EXTENSION_OF[format]}`] = Buffer.from(content, 'utf8');
    }
    if (answer.imageMode === 'referenced') for (const [name, png] of exported.pictures) entries[`${stem}/${name}`] = png;
  }
  return { kind: 'zip', bytes: zipSync(entries) };
}
