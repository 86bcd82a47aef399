// The task files an agent is handed, as MCP resources: `signet://tasks/{task_id}/files/{name}` for a
// person's tasks on the server (read only by that person: the URI is a name, never a credential), and
// the same names for `signet mcp`'s local results. Reading turns text files into text and anything
// else into a base64 blob, as resources/read wants.
import type { Readable } from 'node:stream';
import { ToolInputError, type ResourceContent } from './backend.ts';

export const TASK_FILE_TEMPLATE = 'signet://tasks/{task_id}/files/{+name}';

/** The URI of a task's result file; each segment of the name percent-encoded (pictures/page-1-1.png keeps its slash). */
export function taskFileUri(taskId: string, name: string): string {
  return `signet://tasks/${encodeURIComponent(taskId)}/files/${name.split('/').map(encodeURIComponent).join('/')}`;
}

/** The task and file a `signet://tasks/…` URI names; a ToolInputError for anything else. */
export function parseTaskFileUri(uri: string): { taskId: string; name: string } {
  const match = /^signet:\/\/tasks\/([0-9a-f-]{36})\/files\/([^?#]{1,300})$/.exec(uri);
  const notOurs = () => new ToolInputError(`No such resource: ${uri.slice(0, 200)}. Task files are named signet://tasks/{task_id}/files/{name}, as get_task lists them.`);
  if (!match) throw notOurs();
  try {
    const name = match[2]!.split('/').map(decodeURIComponent).join('/');
    return { taskId: match[1]!, name };
  } catch {
    throw notOurs();
  }
}

/** What resources/read answers for a file: text for text types, base64 for the rest. */
export function resourceContent(uri: string, mimeType: string, data: Buffer): ResourceContent {
  const bare = mimeType.split(';', 1)[0]!.trim();
  if (bare.startsWith('text/') || bare === 'application/json') return { uri, mimeType: bare, text: data.toString('utf8') };
  return { uri, mimeType: bare, blob: data.toString('base64') };
}

/** Reads a stored object whole, refusing one over `maxBytes` (a resource is one JSON-RPC message). */
export async function readWhole(body: Readable, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > maxBytes) {
      body.destroy();
      throw new ToolInputError(`The file is larger than ${Math.round(maxBytes / 1048576)} MB, too large to send as one resource; download it from the Tasks page instead.`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
