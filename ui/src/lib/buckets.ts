// Buckets shown as runs directories (`s3://BUCKET/PREFIX`). The backend reads each through a
// mirror in its cache, and names it everywhere by the mirror's root (a path of `runsDirs`):
// the user is shown the URL instead, with how keeping it in step goes.
import type { BucketStatus } from '../gen/BucketStatus';

/** The bucket that `path` (a runs directory shown) stands for, if it is one. */
export function bucketAt(path: string, buckets: readonly BucketStatus[] | undefined): BucketStatus | undefined {
  return buckets?.find((b) => b.root === path);
}

/** What the user is shown for runs directory `path`: a bucket's URL, else the path itself. */
export function shownDir(path: string, buckets: readonly BucketStatus[] | undefined): string {
  return bucketAt(path, buckets)?.url ?? path;
}

/** A bucket's state in words: still looking, why its last look failed, or nothing to say. */
export function bucketNote(b: BucketStatus): string | null {
  if (b.error) return b.error;
  if (b.looking) return 'looking at the bucket…';
  return null;
}

/** Why `text` is not a bucket URL the app can add, or null when it is one. The backend checks
 *  the rest (a bucket name S3 refuses, a prefix with an empty part). */
export function bucketUrlProblem(text: string): string | null {
  const url = text.trim();
  if (!url) return 'Give the URL of a bucket, as s3://BUCKET/PREFIX.';
  if (!url.startsWith('s3://')) return 'Only s3:// URLs are read (S3 and S3-compatible storage).';
  if (!url.slice('s3://'.length).split('/')[0]) return 'The URL names no bucket: s3://BUCKET/PREFIX.';
  return null;
}

/** A bucket URL as the backend names it (one spelling per bucket and prefix): the prefix
 *  without leading or trailing slashes. `s3://team//runs/` is `s3://team/runs`. */
export function canonicalBucketUrl(text: string): string {
  const rest = text.trim().slice('s3://'.length);
  const slash = rest.indexOf('/');
  const bucket = slash < 0 ? rest : rest.slice(0, slash);
  const prefix = slash < 0 ? '' : rest.slice(slash + 1).replace(/^\/+|\/+$/g, '');
  return prefix ? `s3://${bucket}/${prefix}` : `s3://${bucket}`;
}

/** True when a look has changed what there is to show of the buckets (a first look ended, a
 *  look failed or came back): the poll then takes the new statuses. */
export function bucketsMoved(before: readonly BucketStatus[], after: readonly BucketStatus[]): boolean {
  if (before.length !== after.length) return true;
  return before.some((b, i) => {
    const a = after[i];
    return a.root !== b.root || a.looking !== b.looking || a.error !== b.error || a.lookedMs !== b.lookedMs;
  });
}

/** Whether a look ended its first pass between `before` and `after`: the list is read again. */
export function firstLookEnded(before: readonly BucketStatus[], after: readonly BucketStatus[]): boolean {
  return after.some((a) => !a.looking && before.some((b) => b.root === a.root && b.looking));
}
