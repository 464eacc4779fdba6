// The runs list kept live: the runs a burst of changes touched are asked for again (from the
// watcher's models, no transcript read again) and patched into the list; bursts coalesce.
// One request at a time, so replies apply in order; what is touched meanwhile waits for the
// next. Nothing is patched while the list loads: the keys wait for it.
import type { Change } from '../gen/Change';
import type { RunKey } from '../gen/RunKey';
import type { RunList } from '../gen/RunList';
import { errorMessage, ipc } from './ipc';
import { applyPatches, pollingNotice, touchedRuns } from './listPatch';

/** What the live list needs of the window: its list, whether it is loading, and how to read it
 *  again or say an error. */
export interface LiveHost {
  list(): RunList | null;
  setList(list: RunList): void;
  loading(): boolean;
  refresh(): void;
  error(message: string): void;
}

/** The changes that make the Storage view read its figures again: runs or value directories
 *  that came or went, value files that went. (Files a running agent adds are left out: one a
 *  second would keep re-planning.) */
const STORAGE_KINDS = new Set<Change['kind']>(['run-added', 'run-removed', 'values-added', 'values-removed', 'value-files-removed']);

export function createLiveList(host: LiveHost) {
  let pending = new Map<string, RunKey>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let patching = false;
  let storageTouched = false;
  const state = $state({ polled: [] as Change[], valuesTick: 0 });

  function schedule() {
    if (timer === undefined) timer = setTimeout(patch, 150);
  }

  async function patch() {
    timer = undefined;
    if (storageTouched) {
      storageTouched = false;
      state.valuesTick++;
    }
    const list = host.list();
    if (patching || host.loading() || !list || !pending.size) return;
    const shown = new Set(list.dirs.map((d) => d.path));
    const keys = [...pending.values()].filter((k) => shown.has(k.dir));
    pending = new Map();
    patching = true;
    try {
      const patches = await ipc.runRows(keys);
      const now = host.list();
      if (now) host.setList(applyPatches(now, patches));
    } catch (e) {
      host.error(errorMessage(e));
    } finally {
      patching = false;
      if (pending.size) schedule();
    }
  }

  return {
    /** Why a directory is polled rather than watched, when one is. */
    get notice(): string | null {
      return pollingNotice(state.polled);
    },
    /** Grows after a burst that changed what the Storage view counts. */
    get valuesTick(): number {
      return state.valuesTick;
    },
    /** Takes one change of the watcher. */
    onChange(c: Change) {
      if (c.kind === 'polling') state.polled = [...state.polled, c];
      // The list came from the index before the watcher's first scan ended: list again (what
      // changed meanwhile is read, the rest comes from the index), so nothing that landed
      // meanwhile is missed.
      if (c.kind === 'scanned') return void host.refresh();
      if (STORAGE_KINDS.has(c.kind)) storageTouched = true;
      for (const k of touchedRuns([c])) pending.set(`${k.dir}\n${k.run}`, k);
      schedule();
    },
    /** The list has loaded: what was touched meanwhile is patched now. */
    loaded() {
      if (pending.size) schedule();
    },
    /** A new watcher says again which directories it polls. */
    forgetPolling(): Change[] {
      const was = state.polled;
      state.polled = [];
      return was;
    },
    /** Takes back what `forgetPolling` forgot (the directories were not changed after all),
     *  with anything said since. */
    restorePolling(was: Change[]) {
      state.polled = [...was, ...state.polled];
    },
    /** A running run turns `interrupted` by the clock, with no change on disk to say so: its
     *  row is asked for again (every minute). */
    recheckRunning() {
      const list = host.list();
      if (!list) return;
      for (const r of list.runs) {
        const dir = list.dirs[r.dir]?.path;
        if (dir && r.run.status === 'running') pending.set(`${dir}\n${r.run.id}`, { dir, run: r.run.id });
      }
      schedule();
    },
  };
}
