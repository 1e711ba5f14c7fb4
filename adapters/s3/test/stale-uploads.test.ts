// Crash leftovers on S3: a process killed mid-write leaves an incomplete multipart upload
// (invisible, but stored and billed). open() aborts those under the store's objects/ older
// than staleUploadMs and leaves younger ones (another live process's uploads) alone.
// A scripted client stands in for S3 here, with a written reason: s3rver, the S3 server the
// other tests run against, implements neither ListMultipartUploads nor AbortMultipartUpload.
import { AbortMultipartUploadCommand, HeadBucketCommand, ListMultipartUploadsCommand, type S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { createS3Storage } from '../src/index.js';

const HOUR = 3600_000;

function scriptedS3(uploads: Array<{ Key: string; UploadId: string; Initiated: Date }>) {
  const aborted: string[] = [];
  const listed: Array<Record<string, unknown>> = [];
  const client = {
    async send(command: unknown) {
      if (command instanceof HeadBucketCommand) return {};
      if (command instanceof ListMultipartUploadsCommand) {
        const input = command.input as Record<string, unknown>;
        listed.push(input);
        // Two pages, to follow the markers.
        const prefixed = uploads.filter((u) => u.Key.startsWith(String(input.Prefix)));
        if (input.KeyMarker === undefined) return { Uploads: prefixed.slice(0, 2), IsTruncated: prefixed.length > 2, NextKeyMarker: prefixed[1]?.Key, NextUploadIdMarker: prefixed[1]?.UploadId };
        return { Uploads: prefixed.slice(2), IsTruncated: false };
      }
      if (command instanceof AbortMultipartUploadCommand) {
        aborted.push(String((command.input as { UploadId: string }).UploadId));
        return {};
      }
      throw new Error(`unexpected command ${(command as object).constructor.name}`);
    },
    destroy() {},
  };
  return { client: client as unknown as S3Client, aborted, listed };
}

describe('S3 managed storage: incomplete uploads of a crash', () => {
  it('open() aborts uploads under objects/ older than staleUploadMs, across listing pages, and no others', async () => {
    const now = Date.now();
    const s3 = scriptedS3([
      { Key: 'node-a/objects/ab/old1', UploadId: 'old-1', Initiated: new Date(now - 30 * HOUR) },
      { Key: 'node-a/objects/cd/young', UploadId: 'young', Initiated: new Date(now - 60_000) },
      { Key: 'node-a/objects/ef/old2', UploadId: 'old-2', Initiated: new Date(now - 25 * HOUR) },
    ]);
    const warnings: string[] = [];
    const storage = createS3Storage({ client: s3.client, bucket: 'b', prefix: 'node-a/', onWarning: (m) => warnings.push(m) });
    await storage.open();
    expect(s3.listed[0]?.Prefix).toBe('node-a/objects/');
    expect(s3.aborted.sort()).toEqual(['old-1', 'old-2']);
    expect(warnings).toEqual([]);
    expect(await storage.abortStaleUploads(0)).toBe(3);
  });

  it('a listing failure is a warning, never a failed open', async () => {
    const client = { async send(c: unknown) { if (c instanceof HeadBucketCommand) return {}; throw Object.assign(new Error('denied'), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } }); }, destroy() {} };
    const warnings: string[] = [];
    const storage = createS3Storage({ client: client as unknown as S3Client, bucket: 'b', onWarning: (m) => warnings.push(m) });
    await storage.open();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/AccessDenied.*lifecycle rule/);
  });
});
