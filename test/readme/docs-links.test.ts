// Issue 36: "every relative link resolves". Every link and image of README.md and docs/**/*.md that
// points into the repository must name a file or folder that exists, and an anchor (#…) must be one of
// the headings GitHub makes anchors for in that page. Links to other sites are not fetched (no network).
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT, documentationFiles, headingAnchors, links } from './markdown.ts';

const anchorsOf = new Map<string, Set<string>>();
function anchors(file: string): Set<string> {
  let found = anchorsOf.get(file);
  if (found === undefined) {
    found = headingAnchors(readFileSync(path.join(ROOT, file), 'utf8'));
    anchorsOf.set(file, found);
  }
  return found;
}

/** What is wrong with one link of `file`, or undefined when it resolves. */
export function brokenLink(file: string, target: string): string | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) return undefined; // another site, mailto:, data:
  const [pathPart = '', anchor] = target.split('#', 2) as [string, string | undefined];
  const resolved = pathPart === '' ? file : path.normalize(path.join(path.dirname(file), decodeURIComponent(pathPart)));
  if (resolved.startsWith('..')) return `${target} leads outside the repository`;
  if (!existsSync(path.join(ROOT, resolved))) return `${target}: no file ${resolved}`;
  if (anchor === undefined || anchor === '') return undefined;
  if (!resolved.endsWith('.md') || statSync(path.join(ROOT, resolved)).isDirectory()) return `${target}: an anchor into a file that is not Markdown`;
  if (!anchors(resolved).has(anchor)) return `${target}: ${resolved} has no heading with the anchor #${anchor}`;
  return undefined;
}

test('every relative link and anchor in README.md and docs/ resolves to a file and heading that exist', () => {
  const files = documentationFiles();
  assert.ok(files.length >= 10, `found ${files.length} documentation files`);
  const broken: string[] = [];
  let checked = 0;
  for (const file of files) {
    for (const link of links(readFileSync(path.join(ROOT, file), 'utf8'))) {
      checked += 1;
      const problem = brokenLink(file, link.target);
      if (problem !== undefined) broken.push(`${file}:${link.line}: ${problem}`);
    }
  }
  assert.ok(checked > 50, `checked only ${checked} links`);
  assert.deepEqual(broken, [], `broken links:\n${broken.join('\n')}`);
});

test('the link check fails on a missing file, a missing heading and a path outside the repository', () => {
  assert.match(brokenLink('README.md', 'docs/no-such-page.md') ?? '', /no file docs\/no-such-page\.md/);
  assert.match(brokenLink('README.md', 'docs/README.md#no-such-heading') ?? '', /no heading with the anchor #no-such-heading/);
  assert.match(brokenLink('docs/README.md', '../../etc/passwd') ?? '', /outside the repository/);
  assert.equal(brokenLink('README.md', 'https://example.com/x'), undefined);
  assert.equal(brokenLink('README.md', '#your-first-application-and-account'), undefined);
});
