/**
 * @memberkit/adapter-s3/backends: the storage types this package offers `memberkit serve`
 * (`s3`, `s3-bucket`). Light on purpose (zod and types only): the AWS SDK is large and loads
 * only when a storage is created.
 */
import { z } from 'zod';
import type { KeyDoc, MemberkitBackends, StorageDescriptor } from '@memberkit/types';
import type { S3ConnectionOptions } from './index.js';

const adapter = () => import('./index.js');

/** Document an option for CONFIGURATION.md (zod's global registry, read by the CLI). */
const doc = <T extends z.ZodType>(s: T, description: string, more: Omit<KeyDoc, 'description'> = {}): T => s.meta({ description, ...more }) as T;

/** Where the bucket is and how to reach it (shared by both S3 storages). */
const connection = {
  bucket: doc(z.string().min(1), 'The bucket (it must exist).'),
  prefix: doc(z.string().default(''), 'Key prefix the store lives under, e.g. `archive/2020/`; empty: the whole bucket.'),
  endpoint: doc(z.string().url().optional(), 'Endpoint of an S3-compatible service (MinIO, Ceph, R2...).', { shownDefault: 'AWS' }),
  region: doc(z.string().min(1).optional(), 'Region.', { shownDefault: '`AWS_REGION` / the AWS profile, else `us-east-1`' }),
  forcePathStyle: doc(z.boolean().default(false), 'Path-style addressing (endpoint/bucket/key), needed by most self-hosted servers.'),
  credentials: doc(z.strictObject({ accessKeyId: z.string().min(1), secretAccessKey: z.string().min(1), sessionToken: z.string().optional() }).optional(), 'Static credentials `{ "accessKeyId", "secretAccessKey", "sessionToken" }`. Better left out: the standard AWS chain (`AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`, `AWS_PROFILE`, SSO, instance or container role) keeps secrets out of this file.', { leaf: true, shownDefault: 'the AWS chain' }),
  listPageSize: doc(z.number().int().min(1).max(1000).default(1000), 'Keys per ListObjectsV2 page (1 to 1000).'),
};

type ConnectionConfig = z.infer<z.ZodObject<typeof connection>>;

function toConnection(o: ConnectionConfig): S3ConnectionOptions & { listPageSize: number } {
  return {
    bucket: o.bucket,
    prefix: o.prefix,
    forcePathStyle: o.forcePathStyle,
    listPageSize: o.listPageSize,
    ...(o.endpoint !== undefined ? { endpoint: o.endpoint } : {}),
    ...(o.region !== undefined ? { region: o.region } : {}),
    ...(o.credentials ? { credentials: { accessKeyId: o.credentials.accessKeyId, secretAccessKey: o.credentials.secretAccessKey, ...(o.credentials.sessionToken ? { sessionToken: o.credentials.sessionToken } : {}) } } : {}),
  };
}

const managedOptions = z.strictObject({
  ...connection,
  partSize: doc(z.number().int().min(5 * 1024 * 1024).default(8 * 1024 * 1024), 'Bytes per multipart part (at least 5 MiB). Memory per upload is about (queueSize + 1) × partSize.'),
  queueSize: doc(z.number().int().min(1).default(4), 'Parts uploaded at once per object.'),
});

/** Managed storage in S3: uploaded bytes and replicas; several node processes may share the bucket. */
export const s3Storage = {
  type: 's3',
  description: 'managed object store in an S3 bucket (any S3-compatible endpoint)',
  options: managedOptions,
  create: async (o, ctx) =>
    (await adapter()).createS3Storage({
      ...toConnection(o),
      partSize: o.partSize,
      queueSize: o.queueSize,
      onWarning: (message, cause) => ctx.logger.warn({ err: cause }, message),
    }),
} satisfies StorageDescriptor<z.infer<typeof managedOptions>>;

const bucketOptions = z.strictObject({
  ...connection,
  includeHidden: doc(z.boolean().default(false), 'Also publish hidden keys (a segment starting with `.`), as `tree` does with dot-files.'),
});

/** An existing bucket/prefix, read-only and in place (wrap mode). */
export const s3BucketStorage = {
  type: 's3-bucket',
  description: 'an existing S3 bucket or prefix, read-only, in place',
  options: bucketOptions,
  create: async (o) => (await adapter()).createS3BucketStorage({ ...toConnection(o), includeHidden: o.includeHidden }),
  wrappable: true,
} satisfies StorageDescriptor<z.infer<typeof bucketOptions>>;

export const memberkitBackends: MemberkitBackends = { storage: [s3Storage, s3BucketStorage] };
