// A window over a very long list of fixed-height rows (the lines of a 200 MB value). Browsers
// cap how tall an element may be (a few million pixels), so past MAX_HEIGHT the scrollbar maps
// proportionally onto line numbers instead of one pixel row per line.

export const MAX_HEIGHT = 4_000_000;

export interface Window {
  /** Height of the scrollable content. */
  height: number;
  /** First row shown (0-based) and how many. */
  first: number;
  count: number;
  /** Where the first shown row is drawn, in content pixels. */
  top: number;
}

export function windowFor(scrollTop: number, viewport: number, total: number, row: number, max = MAX_HEIGHT): Window {
  const visible = Math.ceil(viewport / row) + 1;
  const natural = total * row;
  if (natural <= max) {
    const first = Math.max(0, Math.min(Math.floor(scrollTop / row), Math.max(0, total - 1)));
    return { height: natural, first, count: Math.max(0, Math.min(visible, total - first)), top: first * row };
  }
  const maxScroll = Math.max(1, max - viewport);
  const frac = Math.min(1, Math.max(0, scrollTop / maxScroll));
  const first = Math.round(frac * Math.max(0, total - visible + 1));
  return { height: max, first, count: Math.min(visible, total - first), top: scrollTop };
}

/** The scroll position that shows row `index` (0-based) at the top. */
export function scrollTopFor(index: number, viewport: number, total: number, row: number, max = MAX_HEIGHT): number {
  const natural = total * row;
  if (natural <= max) return index * row;
  const visible = Math.ceil(viewport / row) + 1;
  const span = Math.max(1, total - visible + 1);
  return (Math.min(index, span) / span) * Math.max(1, max - viewport);
}
