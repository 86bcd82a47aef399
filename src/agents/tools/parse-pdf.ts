// parse_pdf — operator contract: `data` (base64 PDF) and `filename`, or `task_id` of a finished parse;
// `ocr` (auto/off/force). "first content item: text, the Markdown; structuredContent:
// {task_id, pages, markdown}; the task is in the person's task list". The DoclingDocument JSON and
// the pictures follow as resource links.
import { z } from 'zod';
import { ToolInputError } from '../backend.ts';
import { answering, defineTool, fileLinks, notFinished, toolError } from './tool.ts';
import { pdfArguments, pdfInput } from './pdf-input.ts';

export const parsePdf = defineTool({
  name: 'parse_pdf',
  title: 'Parse a PDF into Markdown',
  description: (backend) =>
    [
      'Reads a PDF into Markdown (headings, lists, tables, reading order; scanned pages by OCR) and a DoclingDocument JSON.',
      backend.localFiles ? 'Give the PDF as path (a file on this machine) or as base64 data with filename.' : 'Give the PDF as base64 data with filename; it becomes a parsing task in your task list.',
      'Or give the task_id of an earlier parse to read its result again.',
      'Returns the Markdown as text, with the JSON and pictures as resource links.',
    ].join(' '),
  input: (backend) => ({
    ...pdfArguments(backend),
    task_id: z.string().max(64).describe('Instead of a PDF: the task_id of an earlier parse (from list_tasks), to read its Markdown again.').optional(),
    ocr: z.enum(['auto', 'off', 'force']).default('auto').describe('auto: OCR the pages without a text layer; off: never; force: every page.'),
  }),
  output: {
    task_id: z.string(),
    pages: z.number().int(),
    markdown: z.string(),
    status: z.enum(['queued', 'running']).describe('Only when the parse has not finished yet (markdown is then empty).').optional(),
  },
  readOnly: false,
  run: (backend, args, waiting) =>
    answering(async () => {
      let task;
      if (args.task_id !== undefined) {
        if (args.data !== undefined || ('path' in args && args.path !== undefined)) throw new ToolInputError('Send either a PDF or a task_id, not both.');
        task = await backend.wait(args.task_id, waiting);
        if (task.kind !== 'docparse') return toolError(`The task ${task.task_id} is a translation, not a parse; use get_task to see its files.`);
      } else {
        task = await backend.parse(pdfInput(backend, args), { ocr: args.ocr }, waiting);
      }
      const unfinished = notFinished(task, { task_id: task.task_id, pages: task.source.pages, markdown: '', status: task.status });
      if (unfinished) return unfinished;
      const markdown = await backend.readText(task.task_id, 'document.md');
      return {
        // The Markdown first: an agent that reads only the first text item gets the document.
        content: [{ type: 'text', text: markdown }, ...fileLinks(task.files, (file) => file.name !== 'document.md')],
        structuredContent: { task_id: task.task_id, pages: task.source.pages, markdown },
      };
    }),
});
