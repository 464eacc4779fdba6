import { describe, expect, it } from 'vitest';
import cases from '../../../tests/fixtures/format/cases.json';
import { age, bytes, cost, count, counted, duration, percent, plural, runSpan, time, tokensOf, usageLine } from './format';

// The cases mctl's formatters are tested on too (tests/it/figures.rs): one rule in both.
const shared = cases as unknown as {
  cost: [number | null, boolean, string][];
  duration: [number | null, string][];
};

describe('format', () => {
  it('sizes', () => {
    expect(bytes(0)).toBe('0 B');
    expect(bytes(1023)).toBe('1023 B');
    expect(bytes(20_481)).toBe('20.0 KiB');
    expect(bytes(602_830)).toBe('589 KiB');
    expect(bytes(200 * 1024 * 1024)).toBe('200 MiB');
  });
  it('counts', () => {
    expect(count(999)).toBe('999');
    expect(count(16_100)).toBe('16k');
    expect(count(4378)).toBe('4.4k');
    expect(count(2_500_000)).toBe('2.5M');
  });
  it('ages and durations', () => {
    expect(age(100_000, 40_000)).toBe('1m');
    expect(age(0, null)).toBe('–');
    expect(age(1000, 5000)).toBe('0s');
    expect(duration(850)).toBe('850 ms');
    expect(duration(245_000)).toBe('4m 05s');
    expect(duration(3 * 3600_000 + 20 * 60_000)).toBe('3h 20m');
    expect(duration(50 * 3600_000)).toBe('2d 2h');
    expect(duration(null)).toBe('–');
  });
  it('money, tokens and times', () => {
    expect(cost(0)).toBe('$0.00');
    expect(cost(0.0423)).toBe('$0.04');
    expect(cost(0.0012)).toBe('$0.0012');
    expect(cost(1.5, true)).toBe('≈$1.50');
    expect(cost(null)).toBe('—');
    expect(tokensOf(65_300)).toBe(16_325);
    expect(time(1_793_534_400_000)).toBe('2026-11-01 12:00:00Z');
  });
});

describe('the rules mctl shares', () => {
  it('writes every shared cost case as mctl does', () => {
    expect(shared.cost.length).toBeGreaterThan(5);
    for (const [usd, estimated, want] of shared.cost) expect(cost(usd, estimated), `${usd}`).toBe(want);
  });
  it('writes every shared duration case as mctl does', () => {
    expect(shared.duration.length).toBeGreaterThan(5);
    for (const [ms, want] of shared.duration) expect(duration(ms), `${ms}`).toBe(want);
  });
  it('writes a message\'s usage with a space on each side of every dot', () => {
    expect(usageLine({ promptTokens: 1204, completionTokens: 70, costUsd: 0.0065 }, 1200)).toBe('1,204 in · 70 out · $0.0065 · model 1s');
    expect(usageLine({ promptTokens: 5, completionTokens: null })).toBe('5 in · 0 out');
    expect(usageLine({ completionTokens: 3, costUsd: 0.2, costEstimated: true })).toBe('0 in · 3 out · ≈$0.20');
  });
  it('times a running run until now and a finished one to its last event', () => {
    const started = 1_000_000;
    expect(runSpan({ status: 'running', startedMs: started, updatedMs: started + 180_000 }, started + 763_000)).toBe(763_000);
    expect(runSpan({ status: 'done', startedMs: started, updatedMs: started + 180_000 }, started + 763_000)).toBe(180_000);
    expect(runSpan({ status: 'done', startedMs: null, updatedMs: started }, started)).toBeNull();
  });
});

describe('plural and percent', () => {
  it('puts the noun in the right form', () => {
    expect(plural(1, 'value')).toBe('1 value');
    expect(plural(0, 'value')).toBe('0 values');
    expect(plural(1500, 'line')).toBe('1,500 lines');
    expect(plural(2, 'match', 'matches')).toBe('2 matches');
    expect(counted(1, 'line')).toBe('1 line');
    expect(counted(1907, 'line')).toBe('1.9k lines');
  });
  it('never reads an unknown count as zero', () => {
    expect(plural(null, 'line')).toBe('lines unknown');
    expect(counted(null, 'line')).toBe('lines unknown');
    expect(percent(null)).toBe('?');
  });
  it('reads a ratio as a percentage', () => {
    expect(percent(0)).toBe('0%');
    expect(percent(0.0004)).toBe('<0.1%');
    expect(percent(0.031)).toBe('3.1%');
    expect(percent(0.456)).toBe('45%');
    expect(percent(0.996)).toBe('>99%');
    expect(percent(1)).toBe('100%');
  });
});
