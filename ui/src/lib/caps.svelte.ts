// What this front end may do, from the backend's settings: the desktop app may do everything;
// a page served by `mctl serve` cannot change the directories shown nor open the file manager,
// and is read-only unless the server was started with --allow-gc. Views hide what is not
// allowed (the backend refuses it anyway). Nothing is allowed until the settings are known.
// `canReveal` is the desktop app's alone: it also says that files are saved through its dialog.
import { ipc } from './ipc';

export const caps = $state({ canChange: false, canSetDirs: false, canReveal: false });

export async function loadCaps(): Promise<void> {
  const s = await ipc.settings();
  caps.canChange = s.canChange;
  caps.canSetDirs = s.canSetDirs;
  caps.canReveal = s.canReveal;
}
