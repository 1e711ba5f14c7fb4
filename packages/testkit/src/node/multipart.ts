import { randomBytes } from 'node:crypto';

/**
 * multipart/form-data as DataONE clients send it (INTEROP.md): every part carries only a
 * Content-Disposition header (no per-part Content-Type), in the order given (create:
 * pid, object, sysmeta), and the body has a Content-Length (a Blob, never chunked).
 *
 * `FormData` cannot be used for the body itself: for a Blob value it always adds
 * `Content-Type: application/octet-stream` to the part. `multipartFormData` builds the same
 * FormData for callers that want it; `multipartBody` is what the node suite sends.
 */
export interface MultipartPart {
  name: string;
  value: string | Uint8Array;
  /** Present for a file part (`filename` in Content-Disposition). */
  fileName?: string;
}

export interface MultipartBody {
  body: Blob;
  contentType: string;
}

type BlobParts = NonNullable<ConstructorParameters<typeof Blob>[0]>;

const quote = (s: string) => s.replace(/["\\\r\n]/g, (c) => encodeURIComponent(c));

export function multipartBody(parts: readonly MultipartPart[]): MultipartBody {
  const boundary = `----memberkit-${randomBytes(12).toString('hex')}`;
  const chunks: Array<string | Uint8Array> = [];
  for (const part of parts) {
    const fileName = part.fileName === undefined ? '' : `; filename="${quote(part.fileName)}"`;
    chunks.push(`--${boundary}\r\nContent-Disposition: form-data; name="${quote(part.name)}"${fileName}\r\n\r\n`);
    chunks.push(part.value);
    chunks.push('\r\n');
  }
  chunks.push(`--${boundary}--\r\n`);
  return { body: new Blob(chunks as BlobParts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** The same parts as a FormData (file parts as Blobs), for clients that prefer it. */
export function multipartFormData(parts: readonly MultipartPart[]): FormData {
  const form = new FormData();
  for (const part of parts) {
    if (part.fileName !== undefined || typeof part.value !== 'string') form.append(part.name, new Blob([part.value] as BlobParts), part.fileName ?? part.name);
    else form.append(part.name, part.value);
  }
  return form;
}

/** create's parts, in the order clients send them: pid, object, sysmeta. */
export function createParts(pid: string, object: Uint8Array | string, sysmetaXml: string): MultipartPart[] {
  return [
    { name: 'pid', value: pid },
    { name: 'object', value: typeof object === 'string' ? new TextEncoder().encode(object) : object, fileName: 'object' },
    { name: 'sysmeta', value: sysmetaXml, fileName: 'sysmeta' },
  ];
}

/** update's parts, in the order clients send them: newPid, object, sysmeta. */
export function updateParts(newPid: string, object: Uint8Array | string, sysmetaXml: string): MultipartPart[] {
  return [
    { name: 'newPid', value: newPid },
    { name: 'object', value: typeof object === 'string' ? new TextEncoder().encode(object) : object, fileName: 'object' },
    { name: 'sysmeta', value: sysmetaXml, fileName: 'sysmeta' },
  ];
}
