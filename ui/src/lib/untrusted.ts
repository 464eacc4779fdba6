// Transcript and tool text is untrusted: it is shown as text (never as HTML), and the
// characters that would make it look like something else are shown for what they are.
// - Invisible format characters (Unicode category Cf: the bidirectional controls U+202A–U+202E,
//   U+2066–U+2069, U+200E/U+200F, zero-width characters, U+FEFF, …) become visible labelled
//   marks, `⟨U+202E⟩`, that cannot change the direction of what follows (SafeText isolates them);
//   the real character stays in the page, so copying copies it.
// - Terminal colours (ANSI SGR sequences) are parsed by `anser` into coloured runs of text; every
//   other escape sequence and control character is shown as a visible mark (`⟨ESC[2K⟩`, `⟨^H⟩`).
//   Nothing is removed from the text's lines: line numbers and byte offsets stay the real ones.
import Anser from 'anser';

export interface Styled {
  kind: 'text';
  text: string;
  /** CSS colours (`rgb(…)`), when the text had SGR colours. */
  fg?: string;
  bg?: string;
  bold?: boolean;
  dim?: boolean;
  italic?: boolean;
  underline?: boolean;
}

/** An invisible format character, kept (for copying) and labelled. */
export interface Format {
  kind: 'format';
  char: string;
  label: string;
}

/** An escape sequence other than colours, or a control character: shown as its label. */
export interface Control {
  kind: 'control';
  raw: string;
  label: string;
}

export type Piece = Styled | Format | Control;

const FORMAT = /\p{Cf}/u;
/** Format characters, and control characters other than tab and newline (C0, DEL, C1). */
const SPECIAL = /[\p{Cf}\u0000-\u0008\u000b-\u001f\u007f-\u009f]/u;
/** Escape sequences: CSI (SGR is the one ending in `m`), OSC, and two-character ones. */
const ESCAPES = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;

/** `⟨U+202E⟩` for a format character. */
export function formatLabel(c: string): string {
  return `⟨U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}⟩`;
}

/** A visible label for a control character or a non-colour escape sequence. */
export function controlLabel(raw: string): string {
  if (raw.startsWith('\u001b')) return `⟨ESC${raw.slice(1)}⟩`;
  const code = raw.codePointAt(0)!;
  if (code < 0x20) return `⟨^${String.fromCharCode(code + 0x40)}⟩`;
  return formatLabel(raw);
}

/** Whether `text` holds anything `pieces` shows differently from plain text: a format
 *  character, a control character or an escape sequence. */
export function hasSpecial(text: string): boolean {
  return SPECIAL.test(text);
}

/** How many invisible format characters `text` holds (a result that has any says so). */
export function countFormat(text: string): number {
  let n = 0;
  for (const c of text) if (FORMAT.test(c)) n++;
  return n;
}

/** Whether `text` has terminal colour sequences. */
export function hasAnsi(text: string): boolean {
  return /\u001b\[[0-9;:]*m/.test(text);
}

/** `text` for a place that holds no elements (a tooltip): every format and control character
 *  replaced by its label. */
export function plainMarks(text: string): string {
  return pieces(text, false)
    .map((p) => (p.kind === 'text' ? p.text : p.label))
    .join('');
}

/** `text` as pieces to show: with `ansi`, colours parsed; without, every escape a mark. */
export function pieces(text: string, ansi = true): Piece[] {
  if (!ansi || !text.includes('\u001b')) return marks(text, {});
  // Sequences anser does not show (it drops them) stand in as a placeholder character the text
  // does not hold, put back as marks once the colours are parsed.
  const others: string[] = [];
  const hole = placeholder(text);
  const masked = text.replace(ESCAPES, (seq) => {
    // Only plain SGR (digits and semicolons) goes to anser: it would drop a private sequence
    // (`ESC[?25m`) or half-read a colon one (`ESC[38:5:196m`) without a trace.
    if (/^\u001b\[[0-9;]*m$/.test(seq)) return seq;
    others.push(seq);
    return hole;
  });
  const out: Piece[] = [];
  let next = 0;
  for (const run of Anser.ansiToJson(masked, { json: true, remove_empty: true, use_classes: false })) {
    const style = styleOf(run);
    run.content.split(hole).forEach((part, i) => {
      if (i > 0) {
        const raw = others[next++] ?? '';
        out.push({ kind: 'control', raw, label: controlLabel(raw) });
      }
      out.push(...marks(part, style));
    });
  }
  return out;
}

function styleOf(run: Anser.AnserJsonEntry): Omit<Styled, 'kind' | 'text'> {
  const d = run.decorations ?? [];
  const style: Omit<Styled, 'kind' | 'text'> = {};
  if (run.fg) style.fg = `rgb(${run.fg})`;
  if (run.bg) style.bg = `rgb(${run.bg})`;
  if (d.includes('bold')) style.bold = true;
  if (d.includes('dim')) style.dim = true;
  if (d.includes('italic')) style.italic = true;
  if (d.includes('underline')) style.underline = true;
  return style;
}

/** `text` split around its format and control characters, each text run with `style`. */
function marks(text: string, style: Omit<Styled, 'kind' | 'text'>): Piece[] {
  const out: Piece[] = [];
  if (!SPECIAL.test(text)) {
    if (text) out.push({ kind: 'text', text, ...style });
    return out;
  }
  let run = '';
  for (const c of text) {
    if (!SPECIAL.test(c)) {
      run += c;
      continue;
    }
    if (run) out.push({ kind: 'text', text: run, ...style });
    run = '';
    out.push(FORMAT.test(c) ? { kind: 'format', char: c, label: formatLabel(c) } : { kind: 'control', raw: c, label: controlLabel(c) });
  }
  if (run) out.push({ kind: 'text', text: run, ...style });
  return out;
}

/** A private-use character `text` does not contain. */
function placeholder(text: string): string {
  for (let code = 0xe000; code <= 0xf8ff; code++) {
    const c = String.fromCharCode(code);
    if (!text.includes(c)) return c;
  }
  return '\u0000'; // a text holding every private-use character: NUL is shown as a mark anyway
}
