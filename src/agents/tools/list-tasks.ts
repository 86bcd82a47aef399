// list_tasks — operator contract: `kind` (docparse/translate, optional) → "the person's tasks, newest first".
import { z } from 'zod';
import { answering, defineTool } from './tool.ts';

export const listTasks = defineTool({
  name: 'list_tasks',
  title: 'List your document tasks',
  description: (backend) => (backend.localFiles ? 'Lists the parses and translations made through this signet mcp, newest first.' : 'Lists your parsing and translation tasks, newest first (the same list as the Tasks page).'),
  input: () => ({ kind: z.enum(['docparse', 'translate']).describe('Only parses (docparse) or only translations (translate); both when left out.').optional() }),
  output: { tasks: z.array(z.record(z.string(), z.unknown())) },
  readOnly: true,
  run: (backend, args) =>
    answering(async () => {
      const tasks = await backend.tasks(args.kind);
      const lines = tasks.map((task) => `${task.task_id}  ${task.kind}  ${task.status}  ${task.source.name} (${task.source.pages} pages)  ${task.created_at}`);
      return {
        content: [{ type: 'text', text: tasks.length === 0 ? 'No tasks yet.' : lines.join('\n') }],
        structuredContent: { tasks },
      };
    }),
});
