// Server-Sent Events read from a fetch response's body (EventSource cannot POST a request nor
// hand over a stream that has ended with an error). The format: events separated by a blank
// line, each `event: NAME` and one or more `data: TEXT` lines; lines starting `:` are comments
// (the server's keep-alives).

export interface SseEvent {
  event: string;
  data: string;
}

/** Splits a growing text into events: `push` each chunk, get back the events it completed. */
export class SseParser {
  private buffer = '';
  /** A CR that ended the last chunk: its LF may start the next. */
  private cr = '';

  push(chunk: string): SseEvent[] {
    let text = this.cr + chunk;
    this.cr = text.endsWith('\r') ? '\r' : '';
    if (this.cr) text = text.slice(0, -1);
    this.buffer += text.replace(/\r\n?/g, '\n');
    const events: SseEvent[] = [];
    for (;;) {
      const end = this.buffer.indexOf('\n\n');
      if (end < 0) return events;
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const parsed = parseBlock(block);
      if (parsed) events.push(parsed);
    }
  }
}

function parseBlock(block: string): SseEvent | null {
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  return data.length ? { event, data: data.join('\n') } : null;
}
