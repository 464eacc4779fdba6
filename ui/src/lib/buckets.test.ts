import { describe, expect, it } from 'vitest';
import type { BucketStatus } from '../gen/BucketStatus';
import { bucketAt, bucketNote, bucketsMoved, bucketUrlProblem, canonicalBucketUrl, firstLookEnded, shownDir } from './buckets';

const bucket = (over: Partial<BucketStatus> = {}): BucketStatus => ({
  url: 's3://team/runs',
  root: '/home/ana/.cache/mission-control/remote/team-runs-1a2b/files',
  looking: false,
  lookedMs: 1_700_000_000_000,
  error: null,
  ...over,
});

describe('buckets shown as runs directories', () => {
  it('shows the URL in place of the mirror path, and a folder as it is', () => {
    const b = bucket();
    expect(shownDir(b.root, [b])).toBe('s3://team/runs');
    expect(shownDir('/home/ana/runs', [b])).toBe('/home/ana/runs');
    expect(shownDir('/home/ana/runs', undefined)).toBe('/home/ana/runs');
    expect(bucketAt(b.root, [b])).toBe(b);
  });

  it('says a look running or failed, and nothing once looked', () => {
    expect(bucketNote(bucket({ looking: true, lookedMs: null }))).toBe('looking at the bucket…');
    expect(bucketNote(bucket({ error: 's3://team/runs: access denied' }))).toBe('s3://team/runs: access denied');
    expect(bucketNote(bucket())).toBeNull();
  });

  it('takes only s3:// URLs that name a bucket', () => {
    expect(bucketUrlProblem(' s3://team/runs ')).toBeNull();
    expect(bucketUrlProblem('s3://team')).toBeNull();
    expect(bucketUrlProblem('')).toMatch(/URL of a bucket/);
    expect(bucketUrlProblem('gs://team/runs')).toMatch(/Only s3:\/\//);
    expect(bucketUrlProblem('/home/ana/runs')).toMatch(/Only s3:\/\//);
    expect(bucketUrlProblem('s3:///runs')).toMatch(/names no bucket/);
  });

  it('spells a bucket URL one way, as the backend does', () => {
    expect(canonicalBucketUrl('s3://team/runs')).toBe('s3://team/runs');
    expect(canonicalBucketUrl(' s3://team//runs/ ')).toBe('s3://team/runs');
    expect(canonicalBucketUrl('s3://team/a/b/')).toBe('s3://team/a/b');
    expect(canonicalBucketUrl('s3://team/')).toBe('s3://team');
    expect(canonicalBucketUrl('s3://team')).toBe('s3://team');
  });

  it('tells a poll what moved: a first look ending, a failure, a new look', () => {
    const looking = [bucket({ looking: true, lookedMs: null })];
    const looked = [bucket()];
    expect(bucketsMoved(looking, looked)).toBe(true);
    expect(firstLookEnded(looking, looked)).toBe(true);
    expect(firstLookEnded(looked, looked)).toBe(false);
    expect(bucketsMoved(looked, [bucket()])).toBe(false);
    expect(bucketsMoved(looked, [bucket({ error: 'unreachable' })])).toBe(true);
    expect(bucketsMoved(looked, [bucket({ lookedMs: 1_700_000_010_000 })])).toBe(true);
    expect(bucketsMoved(looked, [])).toBe(true);
  });
});
