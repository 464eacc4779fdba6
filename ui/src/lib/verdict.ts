// A run is painted from a sampled comparison of its value files with its transcript (each
// value's size, first and last 64 KiB), then read again with every byte compared, as a value
// opened in the compare view is. Only a value the sample called retained can turn out damaged.
import type { RunDetail } from '../gen/RunDetail';

/** Whether a run read with a sample may read otherwise byte for byte: it has a retained value. */
export function sampleMayChange(sampled: RunDetail): boolean {
  return sampled.results.some((r) => r.state === 'retained');
}

/** Whether the verdict of every byte changes what the sampled read shows: a state of a result. */
export function verdictChanged(sampled: RunDetail, full: RunDetail): boolean {
  if (sampled.results.length !== full.results.length) return true;
  return sampled.results.some((r, i) => r.state !== full.results[i].state || r.contextBytes !== full.results[i].contextBytes);
}
