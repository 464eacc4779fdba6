// Markdown of transcript messages, rendered safely. Messages are untrusted: raw HTML is not
// parsed (markdown-it `html: false` shows it as text), links lose their href (the window never
// navigates; the address shows on hover), images become their alt text (nothing is fetched), and
// the result still goes through DOMPurify before it reaches the page.
import DOMPurify from 'dompurify';
import MarkdownIt from 'markdown-it';

const md = new MarkdownIt({ html: false, linkify: false, typographer: false, breaks: false });

md.renderer.rules.link_open = (tokens, idx) => {
  const href = String(tokens[idx].attrGet('href') ?? '');
  return `<a class="md-link" title="${md.utils.escapeHtml(href)}">`;
};

md.renderer.rules.image = (tokens, idx) => {
  const alt = tokens[idx].content || 'image';
  return `<span class="md-image">[image: ${md.utils.escapeHtml(alt)}]</span>`;
};

const ALLOWED_TAGS = [
  'a', 'p', 'br', 'hr', 'strong', 'em', 'del', 's', 'code', 'pre', 'blockquote', 'ul', 'ol', 'li',
  'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'span',
];

export function renderMarkdown(text: string): string {
  const html = md.render(text);
  return DOMPurify.sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR: ['class', 'title', 'start', 'align'],
    ALLOW_DATA_ATTR: false,
  });
}
