import { describe, expect, it } from 'vitest';
import { CommandError, errorMessage, exportFileName, isError } from './ipc';

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

describe('the name of a served export', () => {
  it('is the one the server gives, in any script', () => {
    const d = "attachment; filename*=UTF-8''r%C3%A9sum%C3%A9-the-build.html";
    expect(exportFileName(d, 'run_1', 'html')).toBe('résumé-the-build.html');
  });
  it('is the run id when none, a malformed one or a path is given', () => {
    expect(exportFileName(null, 'run_1', 'md')).toBe('run_1.md');
    expect(exportFileName("attachment; filename*=UTF-8''%E0%A4%A", 'run_1', 'md')).toBe('run_1.md');
    expect(exportFileName("attachment; filename*=UTF-8''..%2Fetc%2Fpasswd", 'run_1', 'md')).toBe('run_1.md');
  });
});
