// Reads the elements of one JSON array out of a file of any size, one element at a time, with the line
// each starts on: the top-level array of an Auth0 bulk file, or the "users" array of a Keycloak realm.
// Only the element being read is held in memory; everything around the array is scanned and dropped.
import { FormatError, isObject, type ImportItem, type JsonObject, type TextChunks } from './records.ts';

export type ArrayElement = { line: number; value: unknown } | { line: number; error: string };

/** Where the array is: the whole document (`[…]`), or the value of a key of the top-level object. */
export type ArrayPlace = { topLevel: true } | { key: string };

const OPEN = new Set(['{', '[']);
const CLOSE = new Set(['}', ']']);
const WHITESPACE = new Set([' ', '\t', '\n', '\r', ',']);

export async function* jsonArrayElements(chunks: TextChunks, place: ArrayPlace): AsyncGenerator<ArrayElement> {
  let line = 1;
  let depth = 0;
  let inString = false;
  let escaped = false;
  // the array's own depth once found (its elements start at arrayDepth)
  let arrayDepth = -1;
  let done = false;
  // keys of the top-level object: at depth 1, a string after `{` or `,` is a key
  let expectKey = false;
  let key = '';
  let lastKey: string | undefined;
  let keyOpen = false;
  // the element being read
  let pieces: string[] = [];
  let elementLine = 0;
  let reading = false;
  let elementDepth = 0;

  for await (const chunk of chunks) {
    let start = reading ? 0 : -1;
    for (let i = 0; i < chunk.length; i++) {
      const ch = chunk[i]!;
      if (ch === '\n') line++;
      if (inString) {
        if (escaped) escaped = false;
        else if (ch === '\\') escaped = true;
        else if (ch === '"') {
          inString = false;
          if (keyOpen) {
            keyOpen = false;
            lastKey = key;
          }
        } else if (keyOpen) key += ch;
        if (reading && !inString && elementDepth === 0) {
          // a string element ends here
          pieces.push(chunk.slice(start, i + 1));
          yield parse(pieces.join(''), elementLine);
          pieces = [];
          reading = false;
        }
        continue;
      }
      if (done) continue;
      if (arrayDepth >= 0 && depth === arrayDepth && !reading) {
        if (ch === ']') {
          done = true;
          depth--;
          continue;
        }
        if (WHITESPACE.has(ch)) continue;
        reading = true;
        elementLine = line;
        elementDepth = 0;
        start = i;
      }
      if (ch === '"') {
        inString = true;
        if (depth === 1 && expectKey && arrayDepth < 0) {
          keyOpen = true;
          key = '';
          expectKey = false;
        }
      } else if (OPEN.has(ch)) {
        depth++;
        if (reading) elementDepth++;
        if (arrayDepth < 0 && ch === '[' && ('topLevel' in place ? depth === 1 : depth === 2 && lastKey === place.key)) arrayDepth = depth;
        if (depth === 1 && ch === '{') expectKey = true;
      } else if (CLOSE.has(ch)) {
        depth--;
        if (reading) elementDepth--;
      } else if (ch === ',' && depth === 1) {
        expectKey = true;
      } else if (ch === ':' && depth === 1) {
        expectKey = false;
      }
      if (reading && elementDepth === 0 && !inString) {
        // an object or array element closed here, or a bare value (number, true, …) ends before , or ]
        const bare = !OPEN.has(chunk[start] ?? '') && !CLOSE.has(ch);
        if (bare) {
          const next = chunk[i + 1];
          if (next !== undefined && !/[\s,\]]/.test(next)) continue;
        }
        pieces.push(chunk.slice(start, i + 1));
        yield parse(pieces.join(''), elementLine);
        pieces = [];
        reading = false;
      }
    }
    if (reading) pieces.push(chunk.slice(start));
  }
  if (arrayDepth < 0) {
    yield { line: 1, error: 'topLevel' in place ? 'the file is not a JSON array' : `the file has no "${place.key}" array at its top level` };
  } else if (!done) {
    yield { line, error: 'the file ends inside the array (cut short?); the records before this line were read' };
  }
}

function parse(text: string, line: number): ArrayElement {
  try {
    return { line, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { line, error: `not valid JSON: ${error instanceof Error ? error.message.slice(0, 120) : 'unreadable'}` };
  }
}

/** The first character that is not white space (or a byte-order mark), and the whole text again. */
export async function firstCharacter(chunks: TextChunks): Promise<{ head: string; all: TextChunks }> {
  const iterator = chunks[Symbol.asyncIterator]();
  const seen: string[] = [];
  let head = '';
  let finished = false;
  while (head === '') {
    const next = await iterator.next();
    if (next.done) {
      finished = true;
      break;
    }
    seen.push(next.value);
    head = next.value.replace(/^[\uFEFF\s]+/, '').charAt(0);
  }
  async function* all(): TextChunks {
    yield* seen;
    if (finished) return;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
  }
  return { head, all: all() };
}

/**
 * One import item per user read from JSON (an array's elements, or JSON Lines): `toItem` turns a user
 * object into an item; anything that is not an object, or that toItem refuses (FormatError), is an
 * error item with its line.
 */
export async function* userItems(elements: AsyncIterable<ArrayElement>, toItem: (user: JsonObject, line: number) => ImportItem): AsyncGenerator<ImportItem> {
  for await (const element of elements) {
    if ('error' in element) {
      yield { line: element.line, kind: 'error', reason: element.error };
    } else if (!isObject(element.value)) {
      yield { line: element.line, kind: 'error', reason: 'a user must be a JSON object' };
    } else {
      try {
        yield toItem(element.value, element.line);
      } catch (error) {
        if (!(error instanceof FormatError)) throw error;
        yield { line: element.line, kind: 'error', reason: error.message };
      }
    }
  }
}
