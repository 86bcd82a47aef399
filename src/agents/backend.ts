// What the agents' tools ask of the place documents are handled: one interface, two back-ends
// (docling-mcp's converters/base.py → local.py / remote.py). `/mcp` binds the tools to a person's
// tasks (task-backend.ts); `signet mcp` binds them to files on this machine (local-backend.ts). The
// tools never know which one they have, and neither back-end knows the MCP SDK.
import type { OcrMode } from '../documents/pdf/ocr-page.ts';

export type TaskKindName = 'docparse' | 'translate';

/** A task as an agent sees it: the record's facts, its files as resource URIs. */
export type AgentTask = {
  task_id: string;
  kind: TaskKindName;
  status: 'queued' | 'running' | 'finished' | 'failed' | 'cancelled';
  source: { name: string; pages: number };
  progress: { done: number; total: number };
  /** translate: the languages; docparse: {} */
  options: { source_lang?: string; target_lang?: string };
  files: AgentFile[];
  error: string | null;
  notes: string[];
  created_at: string;
  finished_at: string | null;
};

export type AgentFile = { name: string; uri: string; mime_type: string; size: number };

/** A PDF handed to a tool: its bytes and name, or (local files only) a path on this machine. */
export type PdfInput = { data: Uint8Array; filename: string } | { path: string };

export type ProgressReport = (done: number, total: number, message: string) => void;

/** How a tool waits for a task: progress as it moves, and the caller's cancellation. */
export type Waiting = { onProgress: ProgressReport; signal: AbortSignal };

/** A resource's content as resources/read returns it: text, or binary as base64. */
export type ResourceContent = { uri: string; mimeType: string; text: string } | { uri: string; mimeType: string; blob: string };

export interface DocumentBackend {
  /** true when tools may name a file on this machine (`path`): only `signet mcp`. */
  readonly localFiles: boolean;
  /** The largest PDF accepted, in bytes (the upload limit). */
  readonly maxPdfBytes: number;
  /** The RFC 6570 template of the resource URIs this back-end gives out (resources/templates/list). */
  readonly resourceTemplate: { uriTemplate: string; name: string; description: string };
  /** Starts a parse of the PDF and waits for it (or until the wait ends; the task is returned as it is then). */
  parse(pdf: PdfInput, options: { ocr: OcrMode }, waiting: Waiting): Promise<AgentTask>;
  /** Starts a translation and waits for it, as parse does. Without source_lang the language is told from the text. */
  translate(pdf: PdfInput, options: { sourceLang?: string | undefined; targetLang: string }, waiting: Waiting): Promise<AgentTask>;
  /** Waits for an existing task of the caller's to end (or for the wait to end). */
  wait(taskId: string, waiting: Waiting): Promise<AgentTask>;
  /** One of the caller's tasks; ToolInputError "not found" for any other id. */
  task(taskId: string): Promise<AgentTask>;
  /** The caller's tasks, newest first. */
  tasks(kind: TaskKindName | undefined): Promise<AgentTask[]>;
  /** A result file of one of the caller's tasks, as text (document.md, translated.md). */
  readText(taskId: string, name: string): Promise<string>;
  /** resources/read: a URI this back-end gave out, for the caller's own task only. */
  readResource(uri: string): Promise<ResourceContent>;
}

/**
 * A refusal the agent can act on: bad input, a task that is not the caller's, a file too large. The
 * tool answers it as a result with `isError: true` and this message, never as a protocol error.
 */
export class ToolInputError extends Error {
  override name = 'ToolInputError';
}
