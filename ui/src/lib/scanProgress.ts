// How far a cold read of the list has come, said as the list's status line while it loads.
import type { ScanProgress } from '../gen/ScanProgress';
import { bytes } from './format';

/** What was read between two readings of the process's counters (`before` taken when the list
 *  was asked for): `null` while nothing is to read (a warm list answers from the index). */
export function scanLine(before: ScanProgress, now: ScanProgress): string | null {
  const runs = now.runs - before.runs;
  if (runs <= 0) return null;
  const done = Math.min(now.runsDone - before.runsDone, runs);
  const total = now.bytes - before.bytes;
  const read = Math.min(now.bytesDone - before.bytesDone, total);
  const group = (n: number) => n.toLocaleString('en-US');
  return `Reading ${group(done)} of ${group(runs)} runs · ${bytes(read)} of ${bytes(total)}`;
}
