// Generated from src/wire/commands.rs: the app's commands by name. Do not edit.
import type { Change } from './Change';
import type { DirRequest } from './DirRequest';
import type { FollowRunRequest } from './FollowRunRequest';
import type { GcPlanRequest } from './GcPlanRequest';
import type { GcReport } from './GcReport';
import type { LinesPage } from './LinesPage';
import type { ListRunsRequest } from './ListRunsRequest';
import type { PeekAnswer } from './PeekAnswer';
import type { PeekValueRequest } from './PeekValueRequest';
import type { Progress } from './Progress';
import type { ResultRef } from './ResultRef';
import type { RunDetail } from './RunDetail';
import type { RunList } from './RunList';
import type { RunPatch } from './RunPatch';
import type { RunRequest } from './RunRequest';
import type { RunRowsRequest } from './RunRowsRequest';
import type { RunUpdate } from './RunUpdate';
import type { SetPinnedRequest } from './SetPinnedRequest';
import type { SetRunsDirsRequest } from './SetRunsDirsRequest';
import type { Settings } from './Settings';
import type { StorageStats } from './StorageStats';
import type { UnfollowRunRequest } from './UnfollowRunRequest';
import type { ValueInfo } from './ValueInfo';
import type { ValueLinesRequest } from './ValueLinesRequest';
import type { ValueTextRequest } from './ValueTextRequest';
import type { ValueVerdict } from './ValueVerdict';

export interface Commands {
  settings: { request: null; response: Settings; stream: null };
  set_runs_dirs: { request: SetRunsDirsRequest; response: Settings; stream: null };
  pick_runs_dir: { request: null; response: string | null; stream: null };
  list_runs: { request: ListRunsRequest; response: RunList; stream: null };
  run_detail: { request: RunRequest; response: RunDetail; stream: null };
  open_value: { request: ResultRef; response: ValueInfo; stream: null };
  verify_value: { request: ResultRef; response: ValueVerdict; stream: null };
  value_lines: { request: ValueLinesRequest; response: LinesPage; stream: null };
  value_text: { request: ValueTextRequest; response: string; stream: null };
  peek_value: { request: PeekValueRequest; response: PeekAnswer; stream: null };
  reveal_value: { request: ResultRef; response: null; stream: null };
  storage: { request: DirRequest; response: StorageStats; stream: null };
  gc_plan: { request: GcPlanRequest; response: GcReport; stream: null };
  gc_apply: { request: DirRequest; response: GcReport; stream: Progress };
  gc_cancel: { request: null; response: null; stream: null };
  set_pinned: { request: SetPinnedRequest; response: boolean; stream: null };
  pinned: { request: DirRequest; response: Array<string>; stream: null };
  watch_changes: { request: null; response: null; stream: Change };
  follow_run: { request: FollowRunRequest; response: null; stream: RunUpdate };
  unfollow_run: { request: UnfollowRunRequest; response: null; stream: null };
  run_rows: { request: RunRowsRequest; response: Array<RunPatch>; stream: null };
}

export type CommandName = keyof Commands;
