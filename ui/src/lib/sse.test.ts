import { describe, expect, it } from 'vitest';
import { SseParser } from './sse';

describe('server-sent events from a stream', () => {
  it('yields each event once it is complete, across chunks cut anywhere', () => {
    const p = new SseParser();
    expect(p.push('event: item\ndata: {"a":')).toEqual([]);
    expect(p.push('1}\n\nevent: done\r\ndata: null\r\n')).toEqual([{ event: 'item', data: '{"a":1}' }]);
    expect(p.push('\r\n')).toEqual([{ event: 'done', data: 'null' }]);
  });

  it('reads a CRLF cut between two chunks as one line end', () => {
    const p = new SseParser();
    expect(p.push('data: a\r')).toEqual([]);
    expect(p.push('\ndata: b\r')).toEqual([]);
    expect(p.push('\n\r\n')).toEqual([{ event: 'message', data: 'a\nb' }]);
  });

  it('skips keep-alive comments and joins data lines', () => {
    const p = new SseParser();
    expect(p.push(':\n\n: keep-alive\n\ndata: a\ndata: b\n\n')).toEqual([{ event: 'message', data: 'a\nb' }]);
  });
});
