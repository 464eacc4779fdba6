import { describe, expect, it } from 'vitest';
import { renderMarkdown } from './markdown';

function mount(html: string): HTMLElement {
  const div = document.createElement('div');
  div.innerHTML = html;
  return div;
}

describe('renderMarkdown', () => {
  it('renders ordinary markdown', () => {
    const el = mount(renderMarkdown('It caches **5 minutes** and `useSession`.\n\n- a\n- b'));
    expect(el.querySelector('strong')?.textContent).toBe('5 minutes');
    expect(el.querySelector('code')?.textContent).toBe('useSession');
    expect(el.querySelectorAll('li').length).toBe(2);
  });
  it('shows raw HTML as text: no script, no handler, no element', () => {
    const payload = `<script>window.__mc_pwned='x'</script><img src=x onerror="window.__mc_pwned='img'"><b onmouseover="x()">b</b>`;
    const el = mount(renderMarkdown(payload));
    expect(el.querySelector('script, img, b, iframe')).toBeNull();
    expect(el.textContent).toContain('<script>');
    const attrs = [...el.querySelectorAll('*')].flatMap((n) => [...n.attributes].map((a) => a.name));
    expect(attrs.filter((a) => a.startsWith('on'))).toEqual([]);
  });
  it('keeps links from navigating: no href at all, the address in the title', () => {
    const el = mount(renderMarkdown('[docs](javascript:window.__mc_pwned=1) and [site](https://example.com/a)'));
    const links = el.querySelectorAll('a');
    // A javascript: link is not even a link: markdown-it leaves it as text.
    expect(links.length).toBe(1);
    expect(el.textContent).toContain('[docs](javascript:');
    for (const a of links) expect(a.hasAttribute('href')).toBe(false);
    expect(links[0].getAttribute('title')).toBe('https://example.com/a');
  });
  it('turns images into their alt text, so nothing is fetched', () => {
    const el = mount(renderMarkdown('![diagram](http://tracker.example/p.png)'));
    expect(el.querySelector('img')).toBeNull();
    expect(el.textContent).toContain('[image: diagram]');
  });
  it('shows terminal colours in a message as colours, and other escapes as marks', () => {
    const el = mount(renderMarkdown('The build \u001b[31mFAILED\u001b[0m at **step 2**\u001b[2K then \u0007.'));
    // No raw escape reaches the page: no ESC character, no bare "[31m".
    expect(el.textContent).not.toContain('\u001b');
    expect(el.textContent).not.toContain('[31m');
    const red = el.querySelector('span.sgr');
    expect(red?.textContent).toBe('FAILED');
    expect((red as HTMLElement).style.color).toMatch(/^rgb\(/);
    const marks = [...el.querySelectorAll('span.ctl')].map((m) => m.textContent);
    expect(marks).toEqual(['⟨ESC[2K⟩', '⟨^G⟩']);
    expect(el.querySelector('strong')?.textContent).toBe('step 2');
  });
  it('marks invisible format characters in a message', () => {
    const el = mount(renderMarkdown('evil\u202Etxt.exe'));
    const mark = el.querySelector('span.fmt') as HTMLElement;
    expect(mark.dataset.label).toBe('⟨U+202E⟩');
    expect(mark.textContent).toBe('\u202E');
  });
});
