// Reading the documentation as the docs tests need it: which Markdown files there are (README.md and
// docs/**/*.md), the shell commands of their ```sh fences, their relative links, and the anchors
// GitHub gives their headings. Markdown is parsed with markdown-it (a dependency already), so a link
// inside a code span or a fence is never taken for a link.
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import MarkdownIt from 'markdown-it';
type Token = ReturnType<InstanceType<typeof MarkdownIt>['parse']>[number];

export const ROOT = path.resolve(import.meta.dirname, '../..');

/** README.md and every Markdown file under docs/, as paths relative to the repository root, sorted. */
export function documentationFiles(root = ROOT): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(path.join(root, dir)).sort()) {
      const relative = path.join(dir, name);
      if (statSync(path.join(root, relative)).isDirectory()) walk(relative);
      else if (name.endsWith('.md')) found.push(relative);
    }
  };
  walk('docs');
  return ['README.md', ...found];
}

export type ShellCommand = { command: string; line: number };

/**
 * Each shell command of a page's ```sh fences, in order: continuation lines joined, comment lines and
 * trailing comments (two spaces, then #) dropped; `line` is where the command starts in the file.
 */
export function shellCommands(markdown: string): ShellCommand[] {
  const commands: ShellCommand[] = [];
  const lines = markdown.split('\n');
  let inSh = false;
  let inOther = false;
  let pending: ShellCommand | undefined;
  lines.forEach((raw, index) => {
    if (!inSh && !inOther && /^\s*```/.test(raw)) {
      if (/^\s*```sh\s*$/.test(raw)) inSh = true;
      else inOther = true;
      return;
    }
    if ((inSh || inOther) && /^\s*```\s*$/.test(raw)) {
      inSh = false;
      inOther = false;
      return;
    }
    if (!inSh) return;
    const line = raw.replace(/\s{2,}#.*$/, '').trimEnd();
    if (line.trimStart().startsWith('#') || line.trim() === '') return;
    const text = line.endsWith('\\') ? line.slice(0, -1).trim() : line.trim();
    pending = pending === undefined ? { command: text, line: index + 1 } : { command: `${pending.command} ${text}`, line: pending.line };
    if (!line.endsWith('\\')) {
      commands.push(pending);
      pending = undefined;
    }
  });
  return commands;
}

const md = new MarkdownIt({ html: true });

export type Link = { target: string; line: number };

/** Every link and image address of a page (Markdown links and images, and href/src in its HTML). */
export function links(markdown: string): Link[] {
  const found: Link[] = [];
  const fromHtml = (html: string, line: number) => {
    for (const m of html.matchAll(/\b(?:href|src)="([^"]*)"/g)) found.push({ target: m[1] ?? '', line });
  };
  let last = 1; // the line of the nearest token that knows its place (table cells' inline tokens do not)
  const visit = (tokens: Token[]) => {
    for (const token of tokens) {
      if (token.map) last = token.map[0] + 1;
      const at = last;
      if (token.type === 'link_open') found.push({ target: String(token.attrGet('href') ?? ''), line: at });
      if (token.type === 'image') found.push({ target: String(token.attrGet('src') ?? ''), line: at });
      if (token.type === 'html_inline' || token.type === 'html_block') fromHtml(token.content, at);
      if (token.children) visit(token.children);
    }
  };
  visit(md.parse(markdown, {}));
  return found;
}

/** The anchors GitHub makes for a page's headings (github-slugger's rules, repeats numbered -1, -2, …). */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const tokens = md.parse(markdown, {});
  tokens.forEach((token, i) => {
    if (token.type !== 'heading_open') return;
    const inline = tokens[i + 1];
    const text = (inline?.children ?? [])
      .filter((child) => child.type === 'text' || child.type === 'code_inline')
      .map((child) => child.content)
      .join('');
    const base = text
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  });
  return anchors;
}
