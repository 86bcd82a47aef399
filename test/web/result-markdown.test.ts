// Issue 17 item 6: "the Markdown rendered safely: no raw HTML from the document is ever executed".
// The document's text is whatever a PDF says; these are the ways it could try to become markup.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pageSection, resultHtml } from '../../src/web/pages/result-markdown.ts';

const FILES = '/api/v1/docparse/tasks/0b7e0c9e-0000-4000-8000-000000000000/files/';

test('"no raw HTML from the document is ever executed": script, event handlers, iframes and style come out as text or not at all', () => {
  const hostile = ['<script>alert(1)</script>', '<img src=x onerror=alert(1)>', '<iframe src="https://evil.example"></iframe>', '<a href="javascript:alert(1)">x</a>', '<style>body{display:none}</style>', '<svg onload=alert(1)>'].join('\n\n');
  const html = resultHtml(hostile, FILES);
  const tags = html.match(/<[^>]+>/g) ?? [];
  assert.deepEqual([...new Set(tags)].sort(), ['</p>', '<p>'], 'the only markup is the paragraphs Markdown made');
  assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/, 'shown as text');
});

test('Markdown links with unsafe schemes lose their href; safe ones get rel="noopener noreferrer nofollow"', () => {
  const html = resultHtml('[a](javascript:alert(1)) [b](https://example.com/x) [c](data:text/html,hi)', FILES);
  const hrefs = [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]);
  assert.deepEqual(hrefs, ['https://example.com/x']);
  assert.match(html, /<a href="https:\/\/example\.com\/x" rel="noopener noreferrer nofollow">b<\/a>/);
});

test("images: only the task's own pictures, served by the files API; anything else (tracking pixels, data: URLs) is dropped", () => {
  const html = resultHtml('![Figure 1: A chart](pictures/page-2-1.png)\n\n![px](https://tracker.example/p.gif)\n\n![d](data:image/png;base64,AAAA)\n\n![up](../../secret.png)', FILES);
  assert.match(html, new RegExp(`<img src="${FILES}pictures/page-2-1\\.png" alt="Figure 1: A chart" />`));
  assert.equal((html.match(/<img/g) ?? []).length, 1);
});

test('tables and headings of a page render; pageSection takes the text between its page marker and the next', () => {
  const md = '<!-- page 1 -->\n\n# Title\n\n<!-- page 2 -->\n\n| a | b |\n| --- | --- |\n| 1 | 2 |\n';
  assert.equal(pageSection(md, 1), '# Title');
  assert.match(resultHtml(pageSection(md, 2), FILES), /<table>[\s\S]*<td>1<\/td>/);
  assert.equal(pageSection(md, 3), '');
});
