// The one tool registry: the four tools and the task files as resources, bound to a back-end, on an
// McpServer of the official SDK. http.ts (/mcp) and stdio.ts (signet mcp) each wrap it in their
// transport. Loaded only when an agent first connects (the SDK is not part of the server's start).
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ListResourcesRequestSchema, ListResourceTemplatesRequestSchema, ReadResourceRequestSchema, McpError, ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { z } from 'zod';
import { ToolInputError, type DocumentBackend, type Waiting } from './backend.ts';
import { getTask } from './tools/get-task.ts';
import { listTasks } from './tools/list-tasks.ts';
import { parsePdf } from './tools/parse-pdf.ts';
import { toolError, type ToolDefinition } from './tools/tool.ts';
import { translatePdf } from './tools/translate-pdf.ts';

export const TOOLS = [parsePdf, translatePdf, listTasks, getTask] as const;

/** How many task files resources/list offers (the newest tasks' files); any of the caller's can be read. */
const LISTED_RESOURCES = 100;

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/**
 * Progress notifications for a request that asked for them (a `progressToken` in its `_meta`). MCP
 * requires the progress value to increase with each notification, so a repeat is not sent.
 */
function progressOf(extra: Extra): Waiting {
  const token = extra._meta?.progressToken;
  let last = -1;
  return {
    signal: extra.signal,
    onProgress: (done, total, message) => {
      if (token === undefined || done <= last) return;
      last = done;
      extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: done, total, message } }).catch(() => {});
    },
  };
}

export type AgentServerInfo = {
  name: string;
  version: string;
  instructions: string;
  /**
   * Something other than a refusal went wrong in a tool or a read (the database or storage away, a
   * bug): says it where operators look and returns the sentence the agent gets instead — on a server
   * never the error's own text, which may name internals.
   */
  unexpected: (error: unknown) => string;
};

export function createAgentServer(backend: DocumentBackend, info: AgentServerInfo): McpServer {
  const server = new McpServer({ name: info.name, version: info.version, title: 'Signet documents' }, { instructions: info.instructions, capabilities: { resources: {} } });
  for (const tool of TOOLS as readonly ToolDefinition[]) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description(backend),
        inputSchema: tool.input(backend),
        ...(tool.output ? { outputSchema: tool.output } : {}),
        annotations: { title: tool.title, readOnlyHint: tool.readOnly, destructiveHint: false, idempotentHint: tool.readOnly, openWorldHint: false },
      },
      async (args: z.infer<z.ZodObject<z.ZodRawShape>>, extra: Extra) => {
        try {
          return await tool.run(backend, args, progressOf(extra));
        } catch (error) {
          if (extra.signal.aborted) throw error;
          return toolError(info.unexpected(error));
        }
      },
    );
  }
  // The task files as resources: the SDK's own resource registry wants a list of fixed URIs or
  // templates it matches itself; ours are read through the back-end, which alone knows whose they are.
  server.server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [backend.resourceTemplate] }));
  server.server.setRequestHandler(ListResourcesRequestSchema, async () => {
    const tasks = await backend.tasks(undefined).catch((error: unknown) => {
      throw new McpError(ErrorCode.InternalError, info.unexpected(error));
    });
    const resources = tasks.flatMap((task) => task.files.map((file) => ({ uri: file.uri, name: file.name, title: `${task.source.name}: ${file.name}`, mimeType: file.mime_type, size: file.size })));
    return { resources: resources.slice(0, LISTED_RESOURCES) };
  });
  server.server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    try {
      return { contents: [await backend.readResource(request.params.uri)] };
    } catch (error) {
      // MCP: an unknown resource is error -32002 (Resource not found), with the reason.
      if (error instanceof ToolInputError) throw new McpError(-32002 as ErrorCode, error.message, { uri: request.params.uri });
      throw new McpError(ErrorCode.InternalError, info.unexpected(error));
    }
  });
  return server;
}
