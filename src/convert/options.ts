// docling-serve's conversion options → a docparse task's options and how the answer is shaped. The
// options arrive as multipart form fields (repeated for lists; Open WebUI sends lists and booleans as
// JSON text) or as the JSON `options` object of /v1/convert/source. Options Signet does not know are
// ignored, as docling-serve ignores them; a known option with a wrong value is docling-serve's 422.
import type { ParseOptions } from '../tasks/tasks.ts';
import { IMAGE_EXPORT_MODES, OUTPUT_FORMATS, SIGNET_FORMATS, type ImageExportMode, type SignetFormat } from './docling-serve.ts';

/** How the answer of a conversion is shaped (stored with the conversion, read again by /v1/result). */
export type AnswerOptions = {
  /** formats Signet produces, in the order asked */
  formats: SignetFormat[];
  /** formats docling-serve knows and Signet does not produce (doctags …): each an error entry */
  unsupported: string[];
  imageMode: ImageExportMode;
  /** a zip instead of JSON (`target_type=zip`, `target: {kind: "zip"}`, or v1alpha's `return_as_file`) */
  zip: boolean;
  abortOnError: boolean;
};

export type ConvertOptions = { parse: ParseOptions; answer: AnswerOptions };

/** A value docling-serve would refuse with 422; `loc` as FastAPI writes it. */
export class OptionError extends Error {
  readonly loc: Array<string | number>;
  constructor(loc: Array<string | number>, message: string) {
    super(message);
    this.name = 'OptionError';
    this.loc = loc;
  }
}

/** A raw option: form fields give strings (repeated → several), JSON gives any value. */
type Raw = unknown;

/** A list option: repeated form fields, a JSON list, a JSON list inside a string, or one string. */
function list(raw: Raw): unknown[] {
  if (Array.isArray(raw)) return raw.flatMap((item) => (typeof item === 'string' && item.trim().startsWith('[') ? list(item) : [item]));
  if (typeof raw === 'string' && raw.trim().startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(raw);
      if (Array.isArray(parsed)) return parsed;
    } catch {
      // not JSON: the string itself
    }
  }
  return raw === undefined || raw === null ? [] : [raw];
}

/** The one value of a scalar option (the last, if repeated). */
function one(raw: Raw): unknown {
  return Array.isArray(raw) ? raw.at(-1) : raw;
}

/** pydantic's lax booleans: true/false, 1/0, yes/no, on/off (any case). */
function bool(name: string, raw: Raw, fallback: boolean): boolean {
  const value = one(raw);
  if (value === undefined || value === null || value === '') return fallback;
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number' && (value === 0 || value === 1)) return value === 1;
  const text = String(value).trim().toLowerCase();
  if (['true', '1', 'yes', 'on', 't', 'y'].includes(text)) return true;
  if (['false', '0', 'no', 'off', 'f', 'n'].includes(text)) return false;
  throw new OptionError([name], 'Input should be a valid boolean');
}

/** ISO 639-1 codes (what most docling clients send, EasyOCR's names) → tesseract's language names. */
const TESSERACT_NAMES: Record<string, string> = {
  en: 'eng', zh: 'chi_sim', 'zh-cn': 'chi_sim', 'zh-hans': 'chi_sim', ch_sim: 'chi_sim', 'zh-tw': 'chi_tra', 'zh-hant': 'chi_tra', ch_tra: 'chi_tra',
  fr: 'fra', de: 'deu', es: 'spa', it: 'ita', pt: 'por', nl: 'nld', pl: 'pol', ru: 'rus', uk: 'ukr', ja: 'jpn', ko: 'kor', ar: 'ara', tr: 'tur', sv: 'swe', da: 'dan', fi: 'fin', no: 'nor', cs: 'ces', el: 'ell', he: 'heb', hi: 'hin',
};

function ocrLanguages(raw: Raw): string[] | undefined {
  const names = list(raw).map((v) => String(v).trim()).filter((v) => v !== '');
  if (names.length === 0) return undefined;
  return [
    ...new Set(
      names.map((name) => {
        const known = TESSERACT_NAMES[name.toLowerCase()];
        if (known) return known;
        // tesseract's own names (eng, chi_sim, deu_latf …) pass as they are
        if (/^[a-z]{3}(_[a-z]{3,4})?$/.test(name)) return name;
        throw new OptionError(['ocr_lang'], `Unknown OCR language ${JSON.stringify(name.slice(0, 20))}: use ISO 639-1 codes (en, zh, fr, de …) or tesseract's names (eng, chi_sim …).`);
      }),
    ),
  ];
}

/** docling's page_range: two page numbers from 1, the first not after the second; (1, sys.maxsize) is "all". */
function pageRange(raw: Raw): [number, number] | undefined {
  const values = list(raw).flatMap((v) => (typeof v === 'string' && /^\s*\d+\s*[-,]\s*\d+\s*$/.test(v) ? v.split(/[-,]/) : [v]));
  if (values.length === 0) return undefined;
  const numbers = values.map((v) => (typeof v === 'number' ? v : Number(String(v).trim())));
  const [first, last] = numbers;
  if (numbers.length !== 2 || !Number.isInteger(first) || !Number.isInteger(last) || first! < 1 || last! < first!) {
    throw new OptionError(['page_range'], 'page_range is two page numbers from 1, the first not after the second, e.g. [1, 4].');
  }
  // docling's default (1, sys.maxsize): every page.
  return first === 1 && last! >= 2 ** 31 - 1 ? undefined : [first!, Math.min(last!, 2 ** 31 - 1)];
}

function formats(raw: Raw): { formats: SignetFormat[]; unsupported: string[] } {
  const asked = list(raw).map((v) => String(v).trim()).filter((v) => v !== '');
  if (asked.length === 0) return { formats: ['md'], unsupported: [] };
  const known = new Set<string>(OUTPUT_FORMATS);
  const bad = asked.find((f) => !known.has(f));
  if (bad !== undefined) throw new OptionError(['to_formats', 0], `Input should be ${OUTPUT_FORMATS.map((f) => `'${f}'`).join(', ')} (got ${JSON.stringify(bad.slice(0, 20))})`);
  const producible = new Set<string>(SIGNET_FORMATS);
  return { formats: [...new Set(asked.filter((f): f is SignetFormat => producible.has(f)))], unsupported: [...new Set(asked.filter((f) => !producible.has(f)))] };
}

function imageMode(raw: Raw): ImageExportMode {
  const value = one(raw);
  if (value === undefined || value === null || value === '') return 'placeholder';
  const text = String(value).trim();
  if ((IMAGE_EXPORT_MODES as readonly string[]).includes(text)) return text as ImageExportMode;
  throw new OptionError(['image_export_mode'], "Input should be 'placeholder', 'embedded' or 'referenced'");
}

/**
 * Reads docling-serve's options. `get(name)` returns the raw value of an option (undefined when not
 * sent); `zipTarget` is what the request said about its target outside the options.
 */
export function readOptions(get: (name: string) => Raw, zipTarget: boolean): ConvertOptions {
  const doOcr = bool('do_ocr', get('do_ocr'), true);
  const forceOcr = bool('force_ocr', get('force_ocr'), false);
  const range = pageRange(get('page_range'));
  const languages = ocrLanguages(get('ocr_lang'));
  const parse: ParseOptions = {
    // docling: OCR runs only with do_ocr; force_ocr replaces the text layer on every page.
    ...(!doOcr ? { ocr: 'off' as const } : forceOcr ? { ocr: 'force' as const } : {}),
    ...(doOcr && languages ? { ocrLanguages: languages } : {}),
    ...(range ? { pageRange: range } : {}),
    ...(bool('include_images', get('include_images'), true) ? {} : { pictures: false }),
    ...(bool('do_table_structure', get('do_table_structure'), true) ? {} : { tableStructure: false }),
  };
  const answer: AnswerOptions = {
    ...formats(get('to_formats')),
    imageMode: imageMode(get('image_export_mode')),
    zip: zipTarget || bool('return_as_file', get('return_as_file'), false),
    abortOnError: bool('abort_on_error', get('abort_on_error'), false),
  };
  return { parse, answer };
}

/** docling-serve 1.x's multipart `target_type`: inbody (default) or zip; presigned_url needs storage Signet does not offer. */
export function zipTargetType(raw: Raw): boolean {
  const value = one(raw);
  if (value === undefined || value === null || value === '' || value === 'inbody') return false;
  if (value === 'zip') return true;
  throw new OptionError(['target_type'], "Input should be 'inbody' or 'zip' (Signet does not offer presigned_url targets)");
}
