// A run is painted from a sampled comparison of its value files with its transcript (each
// value's size, first and last 64 KiB), then read again with every byte compared, as a value
// opened in the compare view is. Only a value the sample called retained, and bigger than the
// two ends it compared, can turn out damaged.
import type { RunDetail } from '../gen/RunDetail';

/** The bytes a sampled check compares at each end of a value file: one up to twice that size
 *  is compared whole. */
const SAMPLED_END = 64 * 1024;

/** Whether a run read with a sample may read otherwise byte for byte: it has a retained value
 *  whose middle the sample did not compare. */
export function sampleMayChange(sampled: RunDetail): boolean {
  return sampled.results.some((r) => r.state === 'retained' && (r.valueFileBytes ?? 0) > 2 * SAMPLED_END);
}

/** Whether the verdict of every byte changes what the sampled read shows: a state of a result. */
export function verdictChanged(sampled: RunDetail, full: RunDetail): boolean {
  if (sampled.results.length !== full.results.length) return true;
  return sampled.results.some((r, i) => r.state !== full.results[i].state || r.contextBytes !== full.results[i].contextBytes);
}
