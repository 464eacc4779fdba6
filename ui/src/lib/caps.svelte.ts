// What this front end may do, from the backend's settings: the desktop app may do everything;
// a page served by `mctl serve` cannot change the directories shown nor open the file manager,
// and is read-only unless the server was started with --allow-gc. Views hide what is not
// allowed (the backend refuses it anyway). Nothing is allowed until the settings are known.
// `canReveal` is the desktop app's alone: it also says that files are saved through its dialog.
// The settings themselves are kept here too, for the views that read them (Settings, Storage),
// and their theme is applied.
import type { Settings } from '../gen/Settings';
import { ipc } from './ipc';
import { applyTheme, storedTheme } from './theme';

export const caps = $state({ canChange: false, canSetDirs: false, canReveal: false });

/** The settings in effect, once known. */
export const current = $state<{ settings: Settings | null }>({ settings: null });

export async function loadCaps(): Promise<void> {
  useSettings(await ipc.settings());
}

/** Takes settings the backend answered (at start, or after the Settings view saved). A page
 *  served by `mctl serve` keeps the theme chosen in this browser: the server has none to save. */
export function useSettings(s: Settings): void {
  caps.canChange = s.canChange;
  caps.canSetDirs = s.canSetDirs;
  caps.canReveal = s.canReveal;
  current.settings = s;
  applyTheme(s.canSetDirs ? s.theme : storedTheme());
}
