import { Readable } from 'node:stream';
import { Busboy } from '@fastify/busboy';
import type { Context } from 'hono';
import { fail, type Operation } from '../errors.js';
import { requestBody } from './request-body.js';
import { plainFormBoundary, plainFormParts, SMALL_BODY_BYTES, type SmallPart } from './small-multipart.js';

/** Small parts (pid, sysmeta, message...) are buffered up to this size; object parts are streamed. */
export const MAX_SMALL_PART_BYTES = 4 * 1024 * 1024;

export interface MultipartResult<T> {
  /** Text of every non-streamed part, by name (file parts included, e.g. sysmeta sent as a file). */
  fields: Map<string, Buffer>;
  /** What the stream handler returned for the streamed part, if it was present. */
  streamed?: T;
}

/** Options of parseMultipart. */
export interface MultipartOptions<T> {
  streamName?: string;
  onStream?: (stream: AsyncIterable<Uint8Array>) => Promise<T>;
  onStreamAbandoned?: (value: T) => Promise<void>;
  signal?: AbortSignal;
}

/**
 * Parse a multipart/form-data body in one pass. The part named `streamName` (the object) is
 * handed to `onStream` as it arrives, never buffered; every other part is collected (bounded).
 * Clients send parts in either order (pid, object, sysmeta is the usual), so nothing is
 * decided until the whole body is read. On any failure, `onStreamAbandoned` undoes what
 * `onStream` started. A small body (declared length up to SMALL_BODY_BYTES) is read whole
 * first and, when it has the plain shape, split without the streaming parser.
 */
export async function parseMultipart<T>(op: Operation, request: Request | Context, options: MultipartOptions<T> = {}): Promise<MultipartResult<T>> {
  const { contentType, body, length } = requestBody(request);
  if (!/^multipart\/form-data/i.test(contentType)) {
    throw fail(op, 'InvalidRequest', `expected a multipart/form-data body (got '${contentType || 'none'}')`);
  }
  if (!body) throw fail(op, 'InvalidRequest', 'the request has no body');
  const boundary = length !== undefined && length <= SMALL_BODY_BYTES ? plainFormBoundary(contentType) : undefined;
  if (boundary === undefined) return streamParts(op, contentType, body, options);
  const bytes = await readWhole(op, body, length!, options.signal);
  const parts = plainFormParts(bytes, boundary);
  if (parts === undefined || parts.some((p) => !readsAsUtf8(p, options.streamName))) {
    return streamParts(op, contentType, Readable.from([bytes], { objectMode: false }), options);
  }
  const fields = new Map<string, Buffer>();
  let streamed: Promise<T> | undefined;
  for (const part of parts) {
    if (!isFilePart(part.name, part.type, part.filename, options.streamName)) {
      // As the streaming parser gives a field: its text (UTF-8, bad sequences replaced), then bytes.
      fields.set(part.name, Buffer.from(part.data.toString('utf8'), 'utf8'));
    } else if (part.name === options.streamName && options.onStream && streamed === undefined) {
      streamed = options.onStream(once(part.data));
    } else fields.set(part.name, part.data);
  }
  return streamed === undefined ? { fields } : { fields, streamed: await streamed };
}

/**
 * A part the split below gives as the streaming parser would: bytes (a file part: its charset
 * changes nothing) or text in UTF-8. A field in another charset is decoded by the streaming
 * parser, which knows them.
 */
function readsAsUtf8(part: SmallPart, streamName: string | undefined): boolean {
  return part.charset === undefined || part.charset === 'utf-8' || part.charset === 'utf8' || isFilePart(part.name, part.type, part.filename, streamName);
}

/**
 * Whether a part is taken as bytes (streamed, or collected as they are) rather than as a text
 * field. The object part is streamed whatever its headers: `curl -F 'object=<file'` and a
 * FormData string send it with no filename, as a plain field would be.
 */
function isFilePart(name: string | undefined, type: string | undefined, filename: string | undefined, streamName: string | undefined): boolean {
  return name === streamName || filename !== undefined || type === 'application/octet-stream';
}

async function* once(bytes: Buffer): AsyncIterable<Uint8Array> {
  if (bytes.length > 0) yield bytes;
}

/** A small body, whole; a failure or a client gone away while it arrives is the caller's InvalidRequest. */
function readWhole(op: Operation, body: Readable, length: number, signal: AbortSignal | undefined): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      return true;
    };
    const stop = (error: Error) => settle() && reject(fail(op, 'InvalidRequest', `the request body was interrupted: ${error.message}`));
    const onAbort = () => body.destroy(new Error('client went away'));
    body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      // Only a body that is not a socket's (which Node frames by its Content-Length) can do this.
      if (size > length) body.destroy(new Error('the body is longer than its Content-Length'));
      else chunks.push(chunk);
    });
    body.once('end', () => settle() && resolve(Buffer.concat(chunks, size)));
    body.once('error', stop);
    // (an Error is made only when needed: 'close' follows every body's 'end', and a stack costs)
    body.once('close', () => settled || stop(new Error('the connection closed before the body ended')));
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The streaming parser (@fastify/busboy) over `body`. */
async function streamParts<T>(op: Operation, contentType: string, body: Readable, options: MultipartOptions<T>): Promise<MultipartResult<T>> {
  let parser: ReturnType<typeof Busboy>;
  try {
    // @fastify/busboy finds boundaries with Buffer.indexOf (native code), where busboy's search
    // runs in JavaScript: ~0.7 s less of the main thread's CPU per GiB uploaded, measured here.
    parser = Busboy({
      headers: { 'content-type': contentType },
      limits: { fieldSize: MAX_SMALL_PART_BYTES, fields: 50, files: 10, parts: 60 },
      isPartAFile: (name, type, filename) => isFilePart(name, type, filename, options.streamName),
    });
  } catch (err) {
    throw fail(op, 'InvalidRequest', `malformed multipart/form-data: ${(err as Error).message}`);
  }
  const fields = new Map<string, Buffer>();
  const parts: Readable[] = [];
  let streamed: Promise<T> | undefined;
  let problem: Error | undefined;

  const done = new Promise<void>((resolve, reject) => {
    parser.on('field', (name, value, _nameTruncated, valueTruncated) => {
      if (valueTruncated) problem ??= fail(op, 'InvalidRequest', `part '${name}' is larger than ${MAX_SMALL_PART_BYTES} bytes`);
      else fields.set(name, Buffer.from(value, 'utf8'));
    });
    parser.on('file', (name, stream) => {
      parts.push(stream);
      // An unfinished part's stream is destroyed with an error when the body fails (stopParts):
      // an 'error' nobody listens to would end the process. The failure itself reaches us
      // through the parser's or the body's 'error' (and through the consumer of a streamed
      // part), so this listener only keeps it from being fatal.
      stream.on('error', ignore);
      // The parser may still announce a part in the same write that reported an error: after
      // the parser is destroyed that part would never end, so nobody may wait on it.
      if (parser.destroyed) {
        stream.destroy();
        return;
      }
      if (name === options.streamName && options.onStream && streamed === undefined) {
        // The consumer reads the part; a failure is reported when we await it. A consumer that
        // stops early (a size limit) returns the iterator without destroying the part, which we
        // drain: a destroyed part would stall the parser and the caller would never get its answer.
        streamed = options.onStream(stream.iterator({ destroyOnReturn: false }));
        streamed.catch(() => stream.resume());
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      stream.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_SMALL_PART_BYTES) {
          problem ??= fail(op, 'InvalidRequest', `part '${name}' is larger than ${MAX_SMALL_PART_BYTES} bytes`);
          chunks.length = 0;
        } else chunks.push(chunk);
      });
      stream.on('end', () => {
        if (size <= MAX_SMALL_PART_BYTES) fields.set(name, Buffer.concat(chunks));
      });
    });
    // A parser destroyed because the body failed leaves the part it was reading open (no 'end',
    // no error), and some parser failures leave it running while pipe() has already unpiped the
    // body: the part's consumer would wait forever for the rest. Every part not yet ended is
    // ended with the failure (multipart-body-failure.test.ts).
    const stopParts = (err: Error) => {
      parser.destroy();
      for (const part of parts) if (!partEnded(part)) part.destroy(err);
    };
    parser.on('error', (err: Error) => {
      reject(fail(op, 'InvalidRequest', `malformed multipart/form-data: ${err.message}`));
      stopParts(err);
    });
    // 'finish': every part ended and the closing delimiter was read.
    parser.on('finish', () => {
      clearInterval(watchdog);
      resolve();
    });
    // A parser given a body ending inside a part it can no longer end (after the close
    // delimiter, say) might neither finish nor fail: it would wait forever. Once the body
    // has ended and the parser has taken every byte, a part that is drained but was never
    // ended by the parser can only be such a part: the request is answered instead of hanging.
    let watchdog: NodeJS.Timeout | undefined;
    let suspicious = 0;
    body.on('end', () => {
      watchdog = setInterval(() => {
        if (parser.destroyed) return clearInterval(watchdog);
        const orphan = parser.writableLength === 0 && parts.some((p) => !partEnded(p) && p.readableLength === 0);
        suspicious = orphan ? suspicious + 1 : 0;
        if (suspicious < 2) return;
        clearInterval(watchdog);
        const error = fail(op, 'InvalidRequest', 'malformed multipart/form-data: the body ended inside a part that follows the closing delimiter');
        reject(error);
        stopParts(error);
      }, 50);
      watchdog.unref();
    });
    body.on('error', (err) => {
      stopParts(err);
      reject(fail(op, 'InvalidRequest', `the request body was interrupted: ${err.message}`));
    });
    options.signal?.addEventListener('abort', () => body.destroy(new Error('client went away')), { once: true });
  });
  body.pipe(parser);

  let value: T | undefined;
  try {
    await done;
    value = streamed ? await streamed : undefined;
  } catch (err) {
    if (streamed) {
      const v = await streamed.catch(() => undefined);
      if (v !== undefined) await options.onStreamAbandoned?.(v);
    }
    throw err;
  }
  if (problem) {
    if (value !== undefined) await options.onStreamAbandoned?.(value);
    throw problem;
  }
  return value === undefined ? { fields } : { fields, streamed: value };
}

function ignore(): void {}

/** Whether the parser has ended this part (its last byte pushed), read or not by its consumer. */
function partEnded(part: Readable): boolean {
  return part.readableEnded || part.destroyed || (part as unknown as { _readableState?: { ended?: boolean } })._readableState?.ended === true;
}

/** A collected part as text. */
export function partText(result: MultipartResult<unknown>, ...names: string[]): string | undefined {
  for (const n of names) {
    const v = result.fields.get(n);
    if (v !== undefined) return v.toString('utf8');
  }
  return undefined;
}
