// translate_pdf — operator contract: `data`, `filename`, `target_lang`, `source_lang` (optional) →
// `{"task_id","status","files":[{"name","uri"}]}` when done (progress notifications while it runs);
// translated.pdf, bilingual.pdf and translated.md as resource links, readable through resources/read.
import { z } from 'zod';
import { answering, defineTool, fileLinks, notFinished } from './tool.ts';
import { pdfArguments, pdfInput } from './pdf-input.ts';

const LANGUAGE = z
  .string()
  .regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/, 'a language code such as en, es or zh');

/** The result files an agent is handed; the layout check's data stays for the result view. */
const DELIVERED = new Set(['translated.pdf', 'bilingual.pdf', 'translated.md', 'translated.html', 'translation-notes.txt']);

export const translatePdf = defineTool({
  name: 'translate_pdf',
  title: 'Translate a PDF, keeping its layout',
  description: (backend) =>
    [
      'Translates a PDF into target_lang and sets the translation on the original pages.',
      backend.localFiles ? 'Give the PDF as path (a file on this machine) or as base64 data with filename.' : 'Give the PDF as base64 data with filename; it becomes a translation task in your task list.',
      'source_lang is told from the text when left out.',
      'Returns resource links to translated.pdf, bilingual.pdf (original and translation side by side) and translated.md.',
    ].join(' '),
  input: (backend) => ({
    ...pdfArguments(backend),
    target_lang: LANGUAGE.describe('The language to translate into: an ISO 639-1 code such as es, de or zh.'),
    source_lang: LANGUAGE.describe('The language the PDF is written in; told from the text when left out.').optional(),
  }),
  output: {
    task_id: z.string(),
    status: z.string(),
    files: z.array(z.object({ name: z.string(), uri: z.string() })),
  },
  readOnly: false,
  run: (backend, args, waiting) =>
    answering(async () => {
      const task = await backend.translate(pdfInput(backend, args), { sourceLang: args.source_lang, targetLang: args.target_lang }, waiting);
      const unfinished = notFinished(task, { task_id: task.task_id, status: task.status, files: [] });
      if (unfinished) return unfinished;
      const files = task.files.filter((file) => DELIVERED.has(file.name));
      const listed = files.map((file) => file.name).join(', ');
      return {
        content: [{ type: 'text', text: `Translated ${task.source.name} (${task.source.pages} pages) from ${task.options.source_lang ?? '?'} to ${task.options.target_lang ?? args.target_lang}: ${listed}. Read a file with resources/read on its link.` }, ...fileLinks(files)],
        structuredContent: { task_id: task.task_id, status: task.status, files: files.map((file) => ({ name: file.name, uri: file.uri })) },
      };
    }),
});
