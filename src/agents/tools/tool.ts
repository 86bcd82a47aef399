// The shape every tool file exports: its name, what it says it does, its input (and output) schema,
// and what it does with a back-end. registry.ts hands these to the SDK; nothing here imports it at run time.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { ToolInputError, type AgentFile, type AgentTask, type DocumentBackend, type Waiting } from '../backend.ts';

export type ToolDefinition<Shape extends z.ZodRawShape = z.ZodRawShape> = {
  name: string;
  title: string;
  description: (backend: DocumentBackend) => string;
  /** The arguments, per back-end: only `signet mcp` takes a `path`. */
  input: (backend: DocumentBackend) => Shape;
  output?: z.ZodRawShape;
  /** MCP tool annotations: read-only tools say so, so clients may run them without asking. */
  readOnly: boolean;
  run(backend: DocumentBackend, args: z.infer<z.ZodObject<Shape>>, waiting: Waiting): Promise<CallToolResult>;
};

export const defineTool = <Shape extends z.ZodRawShape>(tool: ToolDefinition<Shape>): ToolDefinition<Shape> => tool;

/** A result with isError and the reason, for the agent (and the person) to act on. */
export function toolError(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}

/** A task's files as resource links (MCP `resource_link` content), readable through resources/read. */
export function fileLinks(files: AgentFile[], include: (file: AgentFile) => boolean = () => true): CallToolResult['content'] {
  return files.filter(include).map((file) => ({ type: 'resource_link' as const, uri: file.uri, name: file.name, mimeType: file.mime_type, size: file.size }));
}

/**
 * The answer for a task that has not finished: failed or cancelled is a tool error with the reason;
 * still queued or running (the wait ended, the task goes on) is a result saying how to pick it up, its
 * structured content shaped by the tool (`structured`) so it still matches the tool's output schema.
 */
export function notFinished(task: AgentTask, structured: Record<string, unknown>): CallToolResult | undefined {
  if (task.status === 'finished') return undefined;
  if (task.status === 'failed') return toolError(`The task ${task.task_id} failed: ${task.error ?? 'no reason was recorded'}`);
  if (task.status === 'cancelled') return toolError(`The task ${task.task_id} was cancelled; start a new one.`);
  const sentence = `The task ${task.task_id} is still ${task.status} (${task.progress.done} of ${task.progress.total} pages). Call get_task with this task_id later, or parse_pdf with this task_id to wait for a parse again.`;
  return { content: [{ type: 'text', text: sentence }], structuredContent: structured };
}

/** A task as a tool result: a sentence, the record as structured content, its files as links. */
export function taskResult(task: AgentTask, sentence: string): CallToolResult {
  return {
    content: [{ type: 'text', text: sentence }, { type: 'text', text: JSON.stringify(task) }, ...fileLinks(task.files)],
    structuredContent: task as unknown as Record<string, unknown>,
  };
}

/** Runs a tool, turning a ToolInputError into an isError result; anything else is the SDK's to report. */
export async function answering(work: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ToolInputError) return toolError(error.message);
    throw error;
  }
}
