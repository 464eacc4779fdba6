import { describe, expect, it } from 'vitest';
import type { RunDetail } from '../gen/RunDetail';
import { sampleMayChange, verdictChanged } from './verdict';

const detail = (...states: string[]) =>
  ({ results: states.map((state) => ({ state, contextBytes: state === 'retained' ? 700 : 30_000, valueFileBytes: 200_000 })) }) as unknown as RunDetail;

describe('a run painted from a sample of its values', () => {
  it('is read byte for byte only when it has a retained value bigger than the ends compared', () => {
    expect(sampleMayChange(detail('retained', 'unretained'))).toBe(true);
    expect(sampleMayChange(detail('damaged', 'unretained', 'missing'))).toBe(false);
    const small = detail('retained');
    small.results[0].valueFileBytes = 100_000;
    expect(sampleMayChange(small)).toBe(false);
  });
  it('is shown again when the verdict of every byte says otherwise', () => {
    expect(verdictChanged(detail('retained', 'retained'), detail('retained', 'damaged'))).toBe(true);
    expect(verdictChanged(detail('retained'), detail('retained'))).toBe(false);
    expect(verdictChanged(detail('retained'), detail('retained', 'retained'))).toBe(true);
  });
});
