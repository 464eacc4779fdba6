import { describe, expect, it } from 'vitest';
import { CommandError, errorMessage, isError } from './ipc';

describe('errors from commands', () => {
  it('shows the message of a backend error, of any error, and of anything thrown', () => {
    expect(errorMessage(new CommandError('unknown-run', 'unknown run `x`'))).toBe('unknown run `x`');
    expect(errorMessage(new TypeError('boom'))).toBe('boom');
    expect(errorMessage('plain')).toBe('plain');
    expect(errorMessage({ code: 'io' })).toBe('[object Object]');
  });

  it('tells a busy collection from an invalid request by code, not by message', () => {
    const busy = new CommandError('busy', 'another garbage collection is running');
    expect(isError(busy, 'busy')).toBe(true);
    expect(isError(busy, 'invalid')).toBe(false);
    expect(isError(new Error('busy'), 'busy')).toBe(false);
  });
});
