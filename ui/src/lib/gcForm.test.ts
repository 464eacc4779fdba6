import { describe, expect, it } from 'vitest';
import { emptyForm, parseSize, toPolicy } from './gcForm';

describe('gc form', () => {
  it('parses sizes in both unit families', () => {
    expect(parseSize('5GiB')).toBe(5 * 1024 ** 3);
    expect(parseSize('500 MB')).toBe(500_000_000);
    expect(parseSize('1024')).toBe(1024);
    expect(parseSize('1.5 KiB')).toBe(1536);
    expect(parseSize('lots')).toBeNull();
  });
  it('turns the form into the core policy', () => {
    const r = toPolicy({ ...emptyForm(), olderThanDays: '30', orphans: true });
    expect(r).toEqual({ policy: { olderThanMs: 30 * 86_400_000, keepLast: null, maxBytes: null, orphans: true, strays: false, idleGuardMs: 600_000 } });
  });
  it('refuses an empty or a wrong form', () => {
    expect(toPolicy(emptyForm())).toEqual({ error: 'Choose at least one policy.' });
    expect(toPolicy({ ...emptyForm(), keepLast: '2.5' })).toHaveProperty('error');
    expect(toPolicy({ ...emptyForm(), maxBytes: 'huge' })).toHaveProperty('error');
    expect(toPolicy({ ...emptyForm(), strays: true, idleGuardMinutes: '' })).toHaveProperty('error');
  });
});
