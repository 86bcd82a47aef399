// get_task — operator contract: `task_id` → "one task, with its files as resource links". Another
// person's task is "not found", exactly as one that never existed.
import { z } from 'zod';
import { answering, defineTool, taskResult } from './tool.ts';

export const getTask = defineTool({
  name: 'get_task',
  title: 'Look at one task',
  description: () => 'One parsing or translation task: its status, progress, notes and its files as resource links.',
  input: () => ({ task_id: z.string().max(64).describe('The task_id (from parse_pdf, translate_pdf or list_tasks).') }),
  readOnly: true,
  run: (backend, args) =>
    answering(async () => {
      const task = await backend.task(args.task_id);
      const progress = task.status === 'finished' ? `${task.files.length} files` : `${task.progress.done} of ${task.progress.total} pages`;
      return taskResult(task, `${task.kind === 'docparse' ? 'Parse' : 'Translation'} of ${task.source.name}: ${task.status}, ${progress}.${task.error ? ` ${task.error}` : ''}`);
    }),
});
