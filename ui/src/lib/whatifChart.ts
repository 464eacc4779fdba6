// The what-if histogram's data: results per power-of-two size bucket, one stacked series per
// tool, the buckets over the threshold drawn solid (those results would be retained) and the
// others faded. Pure, so that it is tested without a canvas.
import type { WhatIf } from '../gen/WhatIf';
import { bytes } from './format';

/** Colours of the tools' series, in order (the most results first): chosen so that any two stay
 *  apart (CIE76 distance over 20), solid and faded, and none fades into the white page. */
export const PALETTE = ['#0072b2', '#ff7f00', '#e7298a', '#2ca02c', '#8c564b', '#e41a1c', '#9467bd', '#bcbd22', '#44aa99'];
/** The alpha of a faded bar (its bucket at or under the threshold): half. */
export const FADED = '80';
/** More tools than this are summed in one "other tools" series. */
export const MAX_SERIES = 8;

export interface Series {
  label: string;
  /** Results per bucket, in the order of `buckets`. */
  data: number[];
  /** One colour per bucket: solid when the bucket is over the threshold. */
  colors: string[];
}

export interface HistogramData {
  /** Each bucket's upper bound, ascending. */
  buckets: number[];
  labels: string[];
  series: Series[];
  /** The top of the count axis: the round count (1, 2, 5 × 10ⁿ) above the tallest bar, so that
   *  a tick always stands over it. */
  yMax: number;
}

/** Whether every result of bucket `le` (sizes over `le / 2`, at most `le`) is over `threshold`. */
export function overThreshold(le: number, threshold: number): boolean {
  return le / 2 >= threshold;
}

export function histogramData(answer: WhatIf): HistogramData {
  const buckets = [...new Set(answer.histogram.map((b) => b.le))].sort((a, b) => a - b);
  const tools = Object.entries(answer.perTool).sort((a, b) => b[1].results - a[1].results || a[0].localeCompare(b[0]));
  const shown = tools.slice(0, MAX_SERIES);
  const rest = tools.slice(MAX_SERIES);
  const counts = (hist: WhatIf['histogram']) => buckets.map((le) => hist.find((b) => b.le === le)?.count ?? 0);
  const rows: Array<[string, number[]]> = shown.map(([name, f]) => [name, counts(f.histogram)]);
  if (rest.length) {
    const sum = buckets.map(() => 0);
    for (const [, f] of rest) counts(f.histogram).forEach((c, i) => (sum[i] += c));
    rows.push([`${rest.length} other tools`, sum]);
  }
  const tallest = Math.max(0, ...buckets.map((_, i) => rows.reduce((n, [, data]) => n + data[i], 0)));
  return {
    buckets,
    labels: buckets.map((le) => `≤ ${bytes(le)}`),
    series: rows.map(([label, data], i) => {
      const color = PALETTE[i % PALETTE.length];
      return {
        label,
        data,
        colors: buckets.map((le) => (overThreshold(le, answer.threshold) ? color : `${color}${FADED}`)),
      };
    }),
    yMax: roundCountAbove(tallest),
  };
}

/** The smallest round count (1, 2, 5 × 10ⁿ) strictly over `v`. */
export function roundCountAbove(v: number): number {
  for (let scale = 1; ; scale *= 10) for (const m of [1, 2, 5]) if (m * scale > v) return m * scale;
}

/** The slider's position (a power of two, in quarter steps) to a threshold in bytes, and back. */
export function thresholdAt(exponent: number): number {
  return Math.round(2 ** exponent);
}

export function exponentOf(threshold: number): number {
  return Math.round(Math.log2(Math.max(1, threshold)) * 4) / 4;
}

/** Whether a log axis labels `v`: 1, 2 and 5 times a power of ten, from 1 up. */
export function isRoundCount(v: number): boolean {
  if (!Number.isInteger(v) || v < 1) return false;
  const scale = 10 ** Math.floor(Math.log10(v));
  return [1, 2, 5].includes(v / scale);
}
