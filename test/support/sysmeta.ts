import { createHash } from 'node:crypto';
import { SystemMetadataCodec, type SystemMetadata } from '@memberkit/types';

/** System metadata for `bytes` as a client would send it (node-set fields left out). */
export function clientSysmeta(pid: string, bytes: Uint8Array | { size: number; sha1: string }, extra: Partial<SystemMetadata> = {}): string {
  const size = bytes instanceof Uint8Array ? bytes.length : bytes.size;
  const sha1 = bytes instanceof Uint8Array ? createHash('sha1').update(bytes).digest('hex') : bytes.sha1;
  return SystemMetadataCodec.encode(
    {
      identifier: pid,
      formatId: 'application/octet-stream',
      size,
      checksum: { algorithm: 'SHA-1', value: sha1 },
      rightsHolder: 'CN=writer',
      accessPolicy: { allow: [{ subject: ['public'], permission: ['read'] }] },
      replica: [],
      ...extra,
    },
    'v2',
  );
}

/** A multipart create body in the order real clients send it: pid, object, sysmeta. */
export function createForm(pid: string, bytes: Uint8Array, sysmeta = clientSysmeta(pid, bytes)): FormData {
  const form = new FormData();
  form.append('pid', pid);
  form.append('object', new Blob([bytes]), 'object');
  form.append('sysmeta', new Blob([sysmeta], { type: 'text/xml' }), 'sysmeta.xml');
  return form;
}
