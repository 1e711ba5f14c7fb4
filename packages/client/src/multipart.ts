import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';

/** A byte source for an upload: bytes in memory, or a stream with its size. */
export type ObjectSource = Uint8Array | string | { stream: Readable | AsyncIterable<Uint8Array>; size: number };

export type Part = { name: string; value: string | Uint8Array; fileName?: string } | { name: string; source: ObjectSource; fileName: string };

/**
 * A multipart/form-data body the way DataONE peers send it: parts carry only
 * Content-Disposition (no per-part Content-Type), the object streams, and the total length
 * is known up front (Content-Length, not chunked).
 */
export function multipartBody(parts: readonly Part[]): { contentType: string; length: number; body: AsyncIterable<Uint8Array> } {
  const boundary = `----memberkit${randomBytes(12).toString('hex')}`;
  const chunks: Array<Uint8Array | { stream: Readable | AsyncIterable<Uint8Array>; size: number }> = [];
  for (const part of parts) {
    const file = 'fileName' in part && part.fileName !== undefined ? `; filename="${part.fileName.replace(/"/g, '%22')}"` : '';
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"${file}\r\n\r\n`));
    const value = 'source' in part ? part.source : part.value;
    if (typeof value === 'string') chunks.push(Buffer.from(value, 'utf8'));
    else if (value instanceof Uint8Array) chunks.push(value);
    else chunks.push(value);
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  const length = chunks.reduce((n, c) => n + (c instanceof Uint8Array ? c.byteLength : c.size), 0);
  async function* body(): AsyncIterable<Uint8Array> {
    for (const c of chunks) {
      if (c instanceof Uint8Array) yield c;
      else {
        let sent = 0;
        for await (const chunk of c.stream as AsyncIterable<Uint8Array>) {
          sent += chunk.byteLength;
          yield chunk;
        }
        if (sent !== c.size) throw new Error(`the object stream delivered ${sent} bytes, but its declared size is ${c.size}`);
      }
    }
  }
  return { contentType: `multipart/form-data; boundary=${boundary}`, length, body: body() };
}
