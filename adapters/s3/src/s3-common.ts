import { S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { AdapterError } from '@memberkit/types';

/**
 * Where a store lives and how to reach it. Any S3-compatible endpoint works (AWS, MinIO,
 * Ceph RGW, Garage, R2, s3rver...).
 */
export interface S3ConnectionOptions {
  /** The bucket. It MUST exist; the adapters never create buckets. */
  bucket: string;
  /**
   * Key prefix the store lives under, e.g. `archive/2020/`. A missing trailing `/` is added.
   * Default '' (the whole bucket). It MUST NOT start with `/` or contain `.`/`..` segments.
   */
  prefix?: string;
  /**
   * A ready client. When given, `endpoint`, `region`, `forcePathStyle`, `credentials` and
   * `clientConfig` are ignored and `close()` leaves the client open (the caller owns it).
   */
  client?: S3Client;
  /** Endpoint URL of an S3-compatible service, e.g. `http://127.0.0.1:9000`. Default: AWS. */
  endpoint?: string;
  /** Region. Default: the standard AWS chain (AWS_REGION, profile), else `us-east-1`. */
  region?: string;
  /** Path-style addressing (`endpoint/bucket/key`), needed by most self-hosted servers. Default false. */
  forcePathStyle?: boolean;
  /**
   * Static credentials. Default: the standard AWS credential chain (environment, shared
   * config and credentials files, SSO, web identity, container and instance metadata).
   */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Extra S3Client settings (retries, timeouts, checksum behaviour), merged last. */
  clientConfig?: Partial<S3ClientConfig>;
}

/** Resolved connection: the client, whether we own it, bucket and normalised prefix. */
export interface S3Connection {
  client: S3Client;
  ownsClient: boolean;
  bucket: string;
  prefix: string;
}

/** Builds (without I/O) the client and normalised prefix from the options. */
export function connect(options: S3ConnectionOptions): S3Connection {
  if (typeof options.bucket !== 'string' || options.bucket.length === 0) throw new AdapterError('invalid', 'an S3 store needs a bucket name');
  const prefix = normalisePrefix(options.prefix ?? '');
  if (options.client) return { client: options.client, ownsClient: false, bucket: options.bucket, prefix };
  const config: S3ClientConfig = {
    ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}),
    ...(options.forcePathStyle !== undefined ? { forcePathStyle: options.forcePathStyle } : {}),
    // A copy: the SDK marks the credentials object it is given (`$source`), and this one is the caller's configuration.
    ...(options.credentials ? { credentials: { ...options.credentials } } : {}),
    region: options.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1',
    ...options.clientConfig,
  };
  return { client: new S3Client(config), ownsClient: true, bucket: options.bucket, prefix };
}

function normalisePrefix(prefix: string): string {
  if (prefix === '') return '';
  if (prefix.includes('\0') || prefix.startsWith('/')) throw new AdapterError('invalid', `invalid S3 prefix ${JSON.stringify(prefix)}`);
  const p = prefix.endsWith('/') ? prefix : `${prefix}/`;
  for (const s of p.slice(0, -1).split('/')) {
    if (s === '' || s === '.' || s === '..') throw new AdapterError('invalid', `invalid S3 prefix ${JSON.stringify(prefix)}: empty, "." or ".." segment`);
  }
  return p;
}

/** S3's limit on the length of a key, in UTF-8 bytes. */
const MAX_KEY_BYTES = 1024;

/**
 * Checks a storage key (relative to the store's prefix). Refused with kind 'invalid': non-strings,
 * empty keys, NUL and other C0 controls, a leading `/`, empty segments (`a//b`, a trailing `/`:
 * "directory" markers are not objects), `.` and `..` segments (HTTP stacks may normalise them
 * into another key) and keys longer than S3 allows. Backslashes, `%`, `?` and `#` are ordinary
 * key characters in S3 (the SDK encodes them) and are accepted.
 */
export function checkKey(key: unknown, prefix: string): string {
  const problem = keyProblem(key, prefix);
  if (problem) throw new AdapterError('invalid', problem);
  return key as string;
}

/** Why `key` cannot be a storage key, or undefined. */
export function keyProblem(key: unknown, prefix: string): string | undefined {
  if (typeof key !== 'string' || key.length === 0) return 'a storage key must be a non-empty string';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/u.test(key)) return 'a storage key must not contain control characters';
  if (key.startsWith('/')) return 'a storage key must be relative (no leading "/")';
  for (const s of key.split('/')) {
    if (s === '') return 'a storage key must not contain empty segments (or end with "/")';
    if (s === '.' || s === '..') return 'a storage key must not contain "." or ".." segments';
  }
  if (Buffer.byteLength(prefix + key, 'utf8') > MAX_KEY_BYTES) return `a storage key must fit S3's ${MAX_KEY_BYTES}-byte limit`;
  if (key.includes('\uFFFD') || /[\uD800-\uDFFF]/u.test(key) /* lone surrogates, in unicode mode */) return 'a storage key must be well-formed Unicode';
  return undefined;
}

interface SdkError {
  name?: string;
  Code?: string;
  code?: string;
  $metadata?: { httpStatusCode?: number };
  $retryable?: unknown;
}

/** HTTP status of an SDK error, when it has one. */
export function statusOf(e: unknown): number | undefined {
  return (e as SdkError | undefined)?.$metadata?.httpStatusCode;
}

/** True when the error says the key (or the multipart upload) is not there. */
export function isNotFound(e: unknown): boolean {
  const err = e as SdkError | undefined;
  const name = err?.name ?? err?.Code;
  return name === 'NoSuchKey' || name === 'NotFound' || name === 'NoSuchUpload' || (statusOf(e) === 404 && name !== 'NoSuchBucket');
}

const UNAVAILABLE_NAMES = new Set([
  'SlowDown', 'Throttling', 'ThrottlingException', 'RequestThrottled', 'RequestLimitExceeded', 'TooManyRequestsException',
  'ServiceUnavailable', 'InternalError', 'RequestTimeout', 'RequestTimeTooSkewed', 'TimeoutError',
]);
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_SOCKET']);
const ACCESS_NAMES = new Set(['AccessDenied', 'InvalidAccessKeyId', 'SignatureDoesNotMatch', 'ExpiredToken', 'InvalidToken', 'AllAccessDisabled', 'CredentialsProviderError']);

/**
 * Wraps an S3/SDK failure into an AdapterError: throttling, 5xx and network failures are
 * 'unavailable' (retry later); access and credential failures are 'internal' with a message
 * naming the likely cause; an unsatisfiable range is 'invalid'; the rest is 'internal'.
 * AdapterErrors pass through unchanged. Absence is not handled here: lookups test
 * `isNotFound` first and return undefined.
 */
export function s3Error(e: unknown, what: string, bucket: string): AdapterError {
  if (AdapterError.is(e)) return e;
  const err = e as SdkError | undefined;
  const name = err?.name ?? err?.Code ?? '';
  const status = statusOf(e);
  const code = err?.code ?? (e as { cause?: { code?: string } } | undefined)?.cause?.code;
  if (name === 'InvalidRange' || status === 416) return new AdapterError('invalid', `${what}: the range is not satisfiable`, { cause: e });
  if (ACCESS_NAMES.has(name) || status === 403) {
    return new AdapterError('internal', `${what}: S3 refused access to bucket ${bucket} (${name || status}); check the credentials and the bucket policy`, { cause: e });
  }
  if (name === 'NoSuchBucket') return new AdapterError('internal', `${what}: the bucket ${bucket} does not exist`, { cause: e });
  if (UNAVAILABLE_NAMES.has(name) || (status !== undefined && status >= 500) || status === 429 || (code !== undefined && NETWORK_CODES.has(code)) || err?.$retryable) {
    return new AdapterError('unavailable', `${what}: S3 is unavailable (${name || code || status})`, { cause: e });
  }
  return new AdapterError('internal', `${what} failed (${name || code || status || 'unknown error'})`, { cause: e });
}

/** True for the error the SDK throws when a call's abortSignal fires. */
export function isAbortError(e: unknown, signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true || (e as { name?: string } | undefined)?.name === 'AbortError';
}

/** Validates an inclusive byte range before any request ('invalid' for negative or inverted ranges). */
export function checkRange(range: { start: number; end?: number } | undefined): void {
  if (range === undefined) return;
  if (!Number.isSafeInteger(range.start) || range.start < 0) throw new AdapterError('invalid', 'a range start must be a non-negative integer');
  if (range.end !== undefined && (!Number.isSafeInteger(range.end) || range.end < range.start)) throw new AdapterError('invalid', 'a range end must be an integer not below its start');
}

/** Total size from a `Content-Range: bytes s-e/total` header, or undefined. */
export function totalFromContentRange(contentRange: string | undefined): number | undefined {
  const m = contentRange ? /\/(\d+)\s*$/.exec(contentRange) : null;
  return m ? Number(m[1]) : undefined;
}

/**
 * The MD5 an ETag stands for, or undefined. An S3 ETag is the MD5 of the bytes only for an
 * object uploaded in one part (a plain 32-hex value; multipart ETags end in `-N`) and not
 * encrypted with SSE-KMS or SSE-C (their ETags are not digests). SSE-S3 (AES256) ETags are MD5s.
 */
export function md5FromEtag(etag: string | undefined, encryption?: { serverSideEncryption?: string | undefined; sseCustomerAlgorithm?: string | undefined }): string | undefined {
  if (etag === undefined) return undefined;
  const plain = etag.replace(/^W\//, '').replace(/^"|"$/g, '').toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(plain)) return undefined;
  const sse = encryption?.serverSideEncryption?.toLowerCase();
  if (sse !== undefined && sse !== 'aes256') return undefined;
  if (encryption?.sseCustomerAlgorithm) return undefined;
  return plain;
}

/** The ETag without quotes. */
export function plainEtag(etag: string | undefined): string {
  return (etag ?? '').replace(/^W\//, '').replace(/^"|"$/g, '');
}
