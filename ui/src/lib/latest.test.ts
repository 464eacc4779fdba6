import { describe, expect, it } from 'vitest';
import { Latest } from './latest';

describe('Latest', () => {
  it('drops an answer that comes back after a later ask was answered', () => {
    const answers = new Latest();
    const first = answers.ask(); // run A
    answers.ask(); // run B: the caller drops it, another run is shown
    const third = answers.ask(); // run A again
    expect(answers.take(third)).toBe(true);
    expect(answers.take(first)).toBe(false);
  });

  it('takes each answer that comes back in order, even while later asks are out', () => {
    const answers = new Latest();
    const first = answers.ask();
    const second = answers.ask();
    // A run read again every second while one read takes longer still shows each read.
    expect(answers.take(first)).toBe(true);
    const third = answers.ask();
    expect(answers.take(second)).toBe(true);
    expect(answers.take(third)).toBe(true);
  });
});
