// Keyboard navigation of a list: up/down or k/j move, Home/End jump, Enter opens.
export type KeyAction = { kind: 'move'; index: number } | { kind: 'open'; index: number } | { kind: 'filter' } | null;

export function listKey(key: string, index: number, length: number): KeyAction {
  if (length === 0) return key === '/' ? { kind: 'filter' } : null;
  const clamp = (i: number) => Math.max(0, Math.min(length - 1, i));
  switch (key) {
    case 'ArrowDown':
    case 'j':
      return { kind: 'move', index: clamp(index + 1) };
    case 'ArrowUp':
    case 'k':
      return { kind: 'move', index: clamp(index - 1) };
    case 'PageDown':
      return { kind: 'move', index: clamp(index + 20) };
    case 'PageUp':
      return { kind: 'move', index: clamp(index - 20) };
    case 'Home':
      return { kind: 'move', index: 0 };
    case 'End':
      return { kind: 'move', index: length - 1 };
    case 'Enter':
      return index >= 0 ? { kind: 'open', index: clamp(index) } : null;
    case '/':
      return { kind: 'filter' };
    default:
      return null;
  }
}
