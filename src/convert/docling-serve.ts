// docling-serve's request and answer shapes. docling-serve 1.x builds its OpenAPI document (/openapi.json)
// at run time from pydantic models, now in docling itself: docling/datamodel/service/responses.py
// (ConvertDocumentResponse, ExportDocumentResponse, TaskStatusResponse) and docling/datamodel/base_models.py
// (ErrorItem, ConversionStatus), read at docling-project/docling's main of 2026-07; no published copy of the
// generated document exists to commit. Only the parts Signet answers with are written out, field for field;
// test/convert/convert-api.test.ts checks every answer's keys against them.

/** ConversionStatus */
export type ConversionStatus = 'pending' | 'started' | 'failure' | 'success' | 'partial_success' | 'skipped';

/** DoclingComponentType */
export type DoclingComponentType = 'document_backend' | 'model' | 'doc_assembler' | 'user_input' | 'pipeline';

/** ErrorItem: `component_type`, `module_name` and `error_message` required. */
export type ErrorItem = { component_type: DoclingComponentType; module_name: string; error_message: string };

/** ExportDocumentResponse: only `filename` is required; each content is null unless asked for. */
export type ExportDocumentResponse = {
  filename: string;
  md_content: string | null;
  /** a DoclingDocument (docling-core's JSON Schema) */
  json_content: Record<string, unknown> | null;
  html_content: string | null;
  text_content: string | null;
  doctags_content: string | null;
};

/** ConvertDocumentResponse: `document`, `status` and `processing_time` required. */
export type ConvertDocumentResponse = {
  document: ExportDocumentResponse;
  status: ConversionStatus;
  errors: ErrorItem[];
  /** seconds */
  processing_time: number;
  timings: Record<string, never>;
};

/** TaskProcessingMeta */
export type TaskProcessingMeta = { num_docs: number; num_processed: number; num_succeeded: number; num_partially_succeeded: number; num_failed: number };

/** TaskStatusResponse: `task_id`, `task_type` and `task_status` required. */
export type TaskStatusResponse = {
  task_id: string;
  task_type: 'convert';
  task_status: ConversionStatus;
  task_position: number | null;
  task_meta: TaskProcessingMeta | null;
  error_message: string | null;
};

/** docling-serve's refusals (FastAPI's HTTPException): `{"detail": …}`; a validation error's detail is a list. */
export type HttpErrorBody = { detail: string | Array<{ type: string; loc: Array<string | number>; msg: string }> };

/** OutputFormat values docling-serve accepts in `to_formats`. */
export const OUTPUT_FORMATS = ['md', 'json', 'yaml', 'html', 'html_split_page', 'text', 'doctags', 'vtt', 'doclang', 'dclx', 'chunks'] as const;
/** The ones Signet produces. */
export const SIGNET_FORMATS = ['md', 'json', 'html', 'text'] as const;
export type SignetFormat = (typeof SIGNET_FORMATS)[number];

/** ImageRefMode */
export const IMAGE_EXPORT_MODES = ['placeholder', 'embedded', 'referenced'] as const;
export type ImageExportMode = (typeof IMAGE_EXPORT_MODES)[number];

/** docling-serve's own words when a synchronous conversion outlives its wait (app.py, 504). */
export const SYNC_TIMEOUT_DETAIL = (seconds: number) => `Conversion is taking too long. The maximum wait time is ${seconds} seconds; the conversion goes on: fetch it with /v1/convert/…/async next time, or find it in your Signet task list.`;
/** …and before a result exists (404). */
export const RESULT_NOT_READY_DETAIL = 'Task result not found. Please wait for a completion status.';
export const TASK_NOT_FOUND_DETAIL = 'Task not found.';
