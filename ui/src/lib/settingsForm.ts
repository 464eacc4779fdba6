// The Settings view's form: the saved settings as the user edits them (sizes and minutes as
// typed), turned back into what is saved, or a reason it cannot be; and what each setting's
// source means for the user.
import type { SourceKind } from '../gen/SourceKind';
import type { DirsSource } from '../gen/DirsSource';
import type { SavedSettings } from '../gen/SavedSettings';
import type { Theme } from '../gen/Theme';
import { parseSize } from './gcForm';

export interface SettingsForm {
  /** Empty: the default. */
  threshold: string;
  runningWindowMinutes: string;
  gcIdleGuardMinutes: string;
  theme: Theme;
}

const minutes = (ms: number | null) => (ms == null ? '' : String(ms / 60_000));

export function toForm(s: SavedSettings): SettingsForm {
  return {
    threshold: s.threshold == null ? '' : String(s.threshold),
    runningWindowMinutes: minutes(s.runningWindowMs),
    gcIdleGuardMinutes: minutes(s.gcIdleGuardMs),
    theme: s.theme,
  };
}

/** What to save: `dirs` and the form, each field empty meaning "the default". */
export function fromForm(
  f: SettingsForm,
  dirs: string[],
  declined: string[] = [],
  kinds: Partial<Record<string, SourceKind>> = {},
): { saved: SavedSettings } | { error: string } {
  let threshold: number | null = null;
  if (f.threshold.trim()) {
    threshold = parseSize(f.threshold);
    if (threshold == null || threshold < 1) return { error: `The threshold "${f.threshold}" is not a size above 0 (like 20480, 8KiB or 1MiB).` };
  }
  const ms = (text: string, what: string): number | null | string => {
    if (!text.trim()) return null;
    const n = Number(text);
    if (!Number.isFinite(n) || n < 0) return `The ${what} "${text}" is not a number of minutes.`;
    return Math.round(n * 60_000);
  };
  const window = ms(f.runningWindowMinutes, 'running window');
  if (typeof window === 'string') return { error: window };
  const guard = ms(f.gcIdleGuardMinutes, 'GC idle guard');
  if (typeof guard === 'string') return { error: guard };
  // A kind is kept only for a directory still listed.
  const dirKinds: Record<string, SourceKind> = {};
  for (const [d, k] of Object.entries(kinds)) if (k && dirs.includes(d)) dirKinds[d] = k;
  return { saved: { runsDirs: dirs, threshold, runningWindowMs: window, gcIdleGuardMs: guard, theme: f.theme, declinedAgents: declined, dirKinds } };
}

/** Where the setting in effect comes from, said for the user; `flag` and `env` name its flag
 *  and its environment variable. */
export function sourceNote(source: DirsSource, flag: string | null, env: string | null): string {
  switch (source) {
    case 'cli':
      return `Set by ${flag} on the command line: it wins over what is saved here, which applies when the app starts without it.`;
    case 'env':
      return `Set by $${env}: it wins over what is saved here, which applies when the app starts without it.`;
    case 'saved':
      return 'Saved here.';
    case 'default':
      return 'The default.';
  }
}

/** Whether the value in effect is decided outside the app (saving it here changes nothing now). */
export const overridden = (source: DirsSource) => source === 'cli' || source === 'env';
