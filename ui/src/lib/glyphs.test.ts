// The app's own text uses no character that only an emoji font draws: where none is installed
// (a plain Debian desktop, Xvfb) it shows as an empty box. Icons are drawn as inline SVG.
import { describe, expect, it } from 'vitest';

const sources = import.meta.glob(['../**/*.svelte', '../**/*.ts', '!../**/*.test.ts'], {
  query: '?raw',
  import: 'default',
  eager: true,
}) as Record<string, string>;

// Pictographs and emoji (U+1F000 on), and the clock and hourglass symbols drawn as emoji.
const EMOJI_ONLY = /[\u{1F000}-\u{1FAFF}\u{231A}\u{231B}\u{23E9}-\u{23FA}]/u;

describe('the UI text', () => {
  it('has no character only an emoji font draws', () => {
    const files = Object.entries(sources);
    expect(files.length).toBeGreaterThan(20);
    const found = files.flatMap(([file, text]) =>
      text.split('\n').flatMap((line, i) => (EMOJI_ONLY.test(line) ? [`${file}:${i + 1}`] : [])),
    );
    expect(found).toEqual([]);
  });
});
