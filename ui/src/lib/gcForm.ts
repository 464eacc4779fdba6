// The GC form: what the user typed, turned into a policy for the core (or a reason it cannot be).
import type { GcPolicy } from '../gen/GcPolicy';

export interface GcForm {
  olderThanDays: string;
  keepLast: string;
  maxBytes: string;
  orphans: boolean;
  strays: boolean;
  idleGuardMinutes: string;
}

/** No policy chosen, and the idle guard of the settings (10 minutes unless set otherwise). */
export const emptyForm = (idleGuardMs = 600_000): GcForm => ({ olderThanDays: '', keepLast: '', maxBytes: '', orphans: false, strays: false, idleGuardMinutes: String(idleGuardMs / 60_000) });

const UNITS: Record<string, number> = { b: 1, kb: 1e3, mb: 1e6, gb: 1e9, tb: 1e12, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3, tib: 1024 ** 4 };

/** "5GiB", "500 MB", "1024" -> bytes, or null. */
export function parseSize(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?i?b)?\s*$/i.exec(text);
  if (!m) return null;
  const unit = (m[2] ?? 'b').toLowerCase();
  const mult = UNITS[unit];
  return mult ? Math.round(Number(m[1]) * mult) : null;
}

export function toPolicy(f: GcForm): { policy: GcPolicy } | { error: string } {
  const num = (s: string) => (s.trim() === '' ? null : Number(s));
  const days = num(f.olderThanDays);
  const keep = num(f.keepLast);
  const guard = num(f.idleGuardMinutes);
  const max = f.maxBytes.trim() === '' ? null : parseSize(f.maxBytes);
  if (days != null && !(days >= 0)) return { error: 'Age is a number of days.' };
  if (keep != null && !(Number.isInteger(keep) && keep >= 0)) return { error: 'Keep is a whole number of runs.' };
  if (f.maxBytes.trim() !== '' && max == null) return { error: 'Budget is a size like 5GiB or 500MB.' };
  if (guard == null || !(guard >= 0)) return { error: 'The idle guard is a number of minutes.' };
  if (days == null && keep == null && max == null && !f.orphans && !f.strays) return { error: 'Choose at least one policy.' };
  return {
    policy: {
      olderThanMs: days == null ? null : Math.round(days * 86_400_000),
      keepLast: keep,
      maxBytes: max,
      orphans: f.orphans,
      strays: f.strays,
      idleGuardMs: Math.round(guard * 60_000),
    },
  };
}
