// Rendering a task's Markdown result for the result view. The document's text is untrusted: markdown-it
// runs with raw HTML off (a `<script>` in a PDF is shown as text), and sanitize-html then keeps only
// the elements Markdown makes, links with safe schemes only (rel="noopener noreferrer nofollow"),
// and images only when they name one of the task's own picture files, rewritten to the files API.
import MarkdownIt from 'markdown-it';
import sanitizeHtml from 'sanitize-html';

const markdown = new MarkdownIt({ html: false, linkify: false, typographer: false });

const ALLOWED_TAGS = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'p', 'ul', 'ol', 'li', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'pre', 'code', 'em', 'strong', 'blockquote', 'a', 'img', 'br', 'hr', 'del'];

/** `pictures/page-3-1.png`: the only image sources a result may name. */
const PICTURE = /^pictures\/page-\d{1,5}-\d{1,4}\.png$/;

/** The Markdown of one page of document.md: the text between its `<!-- page N -->` marker and the next. */
export function pageSection(documentMd: string, pageNo: number): string {
  const start = documentMd.indexOf(`<!-- page ${pageNo} -->`);
  if (start < 0) return '';
  const from = start + `<!-- page ${pageNo} -->`.length;
  const next = documentMd.indexOf('<!-- page ', from);
  return documentMd.slice(from, next < 0 ? undefined : next).trim();
}

/** Safe HTML for a Markdown result; `filesUrl` is the task's files API prefix (…/files/). */
export function resultHtml(source: string, filesUrl: string): string {
  return sanitizeHtml(markdown.render(source), {
    allowedTags: ALLOWED_TAGS,
    allowedAttributes: { a: ['href', 'rel'], img: ['src', 'alt'], th: ['align'], td: ['align'], code: ['class'] },
    allowedSchemes: ['http', 'https', 'mailto'],
    allowedSchemesAppliedToAttributes: ['href', 'src'],
    allowProtocolRelative: false,
    transformTags: {
      a: (tagName, attribs) => ({ tagName, attribs: { ...attribs, rel: 'noopener noreferrer nofollow' } }),
      img: (tagName, attribs) => {
        const src = attribs.src ?? '';
        // An image naming anything but the task's own pictures is dropped (no tracking pixels, no data: URLs).
        if (!PICTURE.test(src)) return { tagName: 'span', attribs: {} as Record<string, string>, text: attribs.alt ?? '' };
        return { tagName, attribs: { src: `${filesUrl}${src}`, alt: attribs.alt ?? '' } as Record<string, string> };
      },
    },
    exclusiveFilter: (frame) => frame.tag === 'img' && !(frame.attribs.src ?? '').startsWith(filesUrl),
  });
}
