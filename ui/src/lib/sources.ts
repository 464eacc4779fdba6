// What each kind of store is, as the backend says (`settings.storeKinds`): its label, its mark
// in the runs list and what it can do. The views ask these and never match a kind by name, so a
// new agent's store needs no change here.
import type { SourceInfo } from '../gen/SourceInfo';
import type { SourceKind } from '../gen/SourceKind';
import { current } from './caps.svelte';

/** A kind the backend has not described (settings not loaded yet): its name, and no capability. */
function unknown(kind: SourceKind): SourceInfo {
  return {
    kind,
    label: kind,
    noun: kind,
    mark: kind.slice(0, 2).toUpperCase(),
    readTool: '',
    color: '',
    capabilities: { retentionThreshold: false, resumeReplay: false, agentSweep: false, valueFiles: false, flatNames: false },
  };
}

/** What `kind` is, from `kinds` (the settings' by default). */
export function sourceInfo(kind: SourceKind, kinds: SourceInfo[] = current.settings?.storeKinds ?? []): SourceInfo {
  return kinds.find((k) => k.kind === kind) ?? unknown(kind);
}

/** Whether the backend has described `kind` yet (the settings arrive beside the first list): a
 *  kind not described is not marked, rather than marked wrongly. */
export function described(kind: SourceKind, kinds: SourceInfo[] = current.settings?.storeKinds ?? []): boolean {
  return kinds.some((k) => k.kind === kind);
}

/** Whether `kind` is the harness's own store, whose retention threshold this app is about: its
 *  runs go unmarked where they are the only ones; every other agent's are marked. */
export function isThresholdStore(kind: SourceKind, kinds?: SourceInfo[]): boolean {
  return sourceInfo(kind, kinds).capabilities.retentionThreshold;
}
