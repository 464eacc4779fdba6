import { flushSync, mount, unmount } from 'svelte';
import { describe, expect, it } from 'vitest';
import SafeText from '../views/SafeText.svelte';
import { renderMarkdown } from './markdown';
import { countFormat, hasAnsi, pieces, plainMarks } from './untrusted';

/** Every character the views mark: the bidirectional controls and the invisible ones. */
const FORMAT_CHARS = [
  0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069, 0x200e, 0x200f, 0x061c,
  0x200b, 0x200c, 0x200d, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xfeff,
].map((c) => String.fromCodePoint(c));

const label = (c: string) => `⟨U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}⟩`;

describe('invisible format characters', () => {
  it('become labelled marks that keep the real character', () => {
    for (const c of FORMAT_CHARS) {
      expect(pieces(`a${c}b`), label(c)).toEqual([
        { kind: 'text', text: 'a' },
        { kind: 'format', char: c, label: label(c) },
        { kind: 'text', text: 'b' },
      ]);
    }
    expect(countFormat(`x${FORMAT_CHARS.join('')}y`)).toBe(FORMAT_CHARS.length);
    expect(plainMarks('\u202Eevil')).toBe('⟨U+202E⟩evil');
  });

  it('are marked in SafeText, isolated, and copied as themselves', () => {
    const target = document.createElement('div');
    for (const c of FORMAT_CHARS) {
      const app = mount(SafeText, { target, props: { text: `${c}evil` } });
      flushSync();
      const mark = target.querySelector('.fmt') as HTMLElement;
      expect(mark.dataset.label).toBe(label(c));
      // The page holds the real characters: a selection copies what the model got.
      expect(target.textContent).toBe(`${c}evil`);
      unmount(app);
    }
  });

  it('are marked in markdown messages too', () => {
    const box = document.createElement('div');
    box.innerHTML = renderMarkdown('say **\u202Eevil** and `\u2066x`');
    const marks = [...box.querySelectorAll('.fmt')].map((m) => (m as HTMLElement).dataset.label);
    expect(marks).toEqual(['⟨U+202E⟩', '⟨U+2066⟩']);
    expect(box.textContent).toContain('\u202Eevil');
  });
});

describe('terminal colours', () => {
  const log = '\u001b[31merror\u001b[0m: \u001b[1;32mok\u001b[0m \u001b[2Kdone\u0007';
  it('are parsed into coloured runs; other sequences and controls are marks', () => {
    expect(hasAnsi(log)).toBe(true);
    expect(pieces(log)).toEqual([
      { kind: 'text', text: 'error', fg: 'rgb(187, 0, 0)' },
      { kind: 'text', text: ': ' },
      { kind: 'text', text: 'ok', fg: 'rgb(0, 187, 0)', bold: true },
      { kind: 'text', text: ' ' },
      { kind: 'control', raw: '\u001b[2K', label: '⟨ESC[2K⟩' },
      { kind: 'text', text: 'done' },
      { kind: 'control', raw: '\u0007', label: '⟨^G⟩' },
    ]);
  });
  it('marks the sequences the colour parser would drop or half-read', () => {
    expect(pieces('a\u001b[?25mb\u001b[38:5:196mc')).toEqual([
      { kind: 'text', text: 'a' },
      { kind: 'control', raw: '\u001b[?25m', label: '⟨ESC[?25m⟩' },
      { kind: 'text', text: 'b' },
      { kind: 'control', raw: '\u001b[38:5:196m', label: '⟨ESC[38:5:196m⟩' },
      { kind: 'text', text: 'c' },
    ]);
  });
  it('show raw: every byte kept, escapes as marks', () => {
    const raw = pieces(log, false);
    expect(raw[0]).toEqual({ kind: 'control', raw: '\u001b', label: '⟨ESC⟩' });
    expect(raw[1]).toEqual({ kind: 'text', text: '[31merror' });
    const back = raw.map((p) => (p.kind === 'text' ? p.text : p.kind === 'format' ? p.char : p.raw)).join('');
    expect(back).toBe(log);
  });
  it('render as styled text, never as markup', () => {
    const target = document.createElement('div');
    const app = mount(SafeText, { target, props: { text: '\u001b[31m<b>red</b>\u001b[0m' } });
    flushSync();
    const span = target.querySelector('.sgr') as HTMLElement;
    expect(span.textContent).toBe('<b>red</b>');
    expect(span.style.color).toBe('rgb(187, 0, 0)');
    expect(target.querySelector('b')).toBeNull();
    unmount(app);
  });
  it('keep a line a line: a coloured line is the same text without its colours', () => {
    const plain = pieces('\u001b[33mwarning\u001b[0m: unused').map((p) => (p.kind === 'text' ? p.text : '')).join('');
    expect(plain).toBe('warning: unused');
  });
});
