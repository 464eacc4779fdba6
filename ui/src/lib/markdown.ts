// Markdown of transcript messages, rendered safely. Messages are untrusted: raw HTML is not
// parsed (markdown-it `html: false` shows it as text), links lose their href (the window never
// navigates; the address shows on hover), images become their alt text (nothing is fetched), and
// the result still goes through DOMPurify before it reaches the page.
import DOMPurify from 'dompurify';
import MarkdownIt from 'markdown-it';
import { hasSpecial, pieces } from './untrusted';

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
  const fragment = DOMPurify.sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR: ['class', 'title', 'start', 'align'],
    ALLOW_DATA_ATTR: false,
    RETURN_DOM_FRAGMENT: true,
  });
  markSpecial(fragment);
  const box = document.createElement('div');
  box.append(fragment);
  return box.innerHTML;
}

/** Shows the text under `root` as SafeText shows a tool output: every invisible format
 *  character as a labelled, isolated mark, terminal colours as colours, every other escape
 *  sequence or control character as a visible mark (`⟨ESC[2K⟩`). Built as elements, never as
 *  markup. A colour holds to the end of its text node (markdown's formatting splits those). */
function markSpecial(root: Node) {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const texts: Text[] = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) if (hasSpecial(n.nodeValue ?? '')) texts.push(n as Text);
  for (const t of texts) {
    const parts: Node[] = [];
    for (const p of pieces(t.nodeValue ?? '', true)) {
      if (p.kind === 'format') {
        const mark = document.createElement('span');
        mark.className = 'fmt';
        mark.dataset.label = p.label;
        mark.textContent = p.char;
        parts.push(mark);
      } else if (p.kind === 'control') {
        const mark = document.createElement('span');
        mark.className = 'ctl';
        mark.title = 'control sequence, not obeyed';
        mark.textContent = p.label;
        parts.push(mark);
      } else if (p.fg || p.bg || p.bold || p.dim || p.italic || p.underline) {
        const run = document.createElement('span');
        run.className = ['sgr', p.bold && 'sgr-bold', p.dim && 'sgr-dim', p.italic && 'sgr-italic', p.underline && 'sgr-underline'].filter(Boolean).join(' ');
        if (p.fg) run.style.color = p.fg;
        if (p.bg) run.style.backgroundColor = p.bg;
        run.textContent = p.text;
        parts.push(run);
      } else {
        parts.push(document.createTextNode(p.text));
      }
    }
    t.replaceWith(...parts);
  }
}
