import { describe, expect, it } from 'vitest';
import type { Figures } from '../gen/Figures';
import type { WhatIf } from '../gen/WhatIf';
import { FADED, MAX_SERIES, PALETTE, exponentOf, histogramData, isRoundCount, overThreshold, roundCountAbove, thresholdAt } from './whatifChart';

function figures(histogram: Array<[number, number]>): Figures {
  const results = histogram.reduce((s, [, c]) => s + c, 0);
  return {
    results, totalBytes: 0, retained: 0, valueBytes: 0, contextBytes: 0, savedBytes: 0, savedTokens: 0,
    histogram: histogram.map(([le, count]) => ({ le, count, bytes: le * count })),
  };
}

describe('the what-if histogram', () => {
  const answer: WhatIf = {
    threshold: 20480,
    ...figures([[1024, 5], [32768, 3], [65536, 1]]),
    perTool: { read_file: figures([[1024, 1], [32768, 3]]), bash: figures([[1024, 4], [65536, 1]]) },
  };
  it('stacks one series per tool over the buckets, most results first', () => {
    const h = histogramData(answer);
    expect(h.buckets).toEqual([1024, 32768, 65536]);
    expect(h.labels).toEqual(['≤ 1.0 KiB', '≤ 32.0 KiB', '≤ 64.0 KiB']);
    expect(h.series.map((s) => s.label)).toEqual(['bash', 'read_file']);
    expect(h.series[0].data).toEqual([4, 0, 1]);
    expect(h.series[1].data).toEqual([1, 3, 0]);
  });
  it('draws solid only the buckets whose results are all over the threshold', () => {
    const [bash] = histogramData(answer).series;
    expect(bash.colors[0].length).toBe(9); // faded: #rrggbbaa
    expect(bash.colors[1].length).toBe(9); // 16 KiB-32 KiB: partly under 20,480
    expect(bash.colors[2].length).toBe(7);
    expect(overThreshold(32768, 16384)).toBe(true);
    expect(overThreshold(32768, 20480)).toBe(false);
  });
  it('sums the tools past the first few in one series', () => {
    const many: WhatIf = { ...answer, perTool: {} };
    for (let i = 0; i < MAX_SERIES + 3; i++) many.perTool[`t${i}`] = figures([[1024, 1]]);
    const h = histogramData(many);
    expect(h.series).toHaveLength(MAX_SERIES + 1);
    expect(h.series[MAX_SERIES]).toMatchObject({ label: '3 other tools', data: [3, 0, 0] });
  });
  it('maps the slider to thresholds and back', () => {
    expect(thresholdAt(14)).toBe(16384);
    expect(exponentOf(20480)).toBe(14.25);
    expect(thresholdAt(exponentOf(65536))).toBe(65536);
  });
});

describe('the log axis', () => {
  it('labels whole counts of 1, 2 and 5 times a power of ten', () => {
    expect([0.5, 1, 2, 3, 5, 10, 20, 40, 50, 1000].filter(isRoundCount)).toEqual([1, 2, 5, 10, 20, 50, 1000]);
  });
  it('tops the axis with the round count above the tallest stacked bar', () => {
    expect([0, 1, 4, 5, 7, 10, 99, 1000].map(roundCountAbove)).toEqual([1, 2, 5, 10, 10, 20, 100, 2000]);
    // The tallest bar, 5 results (4 + 1 in the first bucket), gets a tick above it: 10.
    const answer: WhatIf = { threshold: 20480, ...figures([[1024, 5], [32768, 3]]), perTool: { a: figures([[1024, 4], [32768, 3]]), b: figures([[1024, 1]]) } };
    expect(histogramData(answer).yMax).toBe(10);
  });
});

describe('the palette', () => {
  it('keeps every two series apart, even faded', () => {
    // CIE76 distance in Lab between the colours, solid and faded (as drawn over the white
    // page); over 20 reads as two colours at a glance.
    const lab = (hex: string, alpha: number) => {
      const lin = [1, 3, 5].map((i) => {
        const v = (alpha * parseInt(hex.slice(i, i + 2), 16) + (1 - alpha) * 255) / 255;
        return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
      });
      const [x, y, z] = [
        (0.4124 * lin[0] + 0.3576 * lin[1] + 0.1805 * lin[2]) / 0.95047,
        0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2],
        (0.0193 * lin[0] + 0.1192 * lin[1] + 0.9505 * lin[2]) / 1.08883,
      ].map((t) => (t > 216 / 24389 ? Math.cbrt(t) : (24389 / 27 * t + 16) / 116));
      return [116 * y - 16, 500 * (x - y), 200 * (y - z)];
    };
    const shown = PALETTE.slice(0, MAX_SERIES + 1);
    for (const alpha of [1, parseInt(FADED, 16) / 255])
      for (let i = 0; i < shown.length; i++)
        for (let j = i + 1; j < shown.length; j++) {
          const [a, b] = [lab(shown[i], alpha), lab(shown[j], alpha)];
          const d = Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
          expect(d, `${shown[i]} and ${shown[j]} at alpha ${alpha.toFixed(2)}`).toBeGreaterThan(20);
        }
  });
});
