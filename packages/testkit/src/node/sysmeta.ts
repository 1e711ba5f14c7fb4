import { createHash } from 'node:crypto';
import { SystemMetadataCodec, type AccessRule, type ApiVersion, type SystemMetadata } from '@memberkit/types';

const NODE_HASH: Record<string, string> = { 'SHA-1': 'sha1', MD5: 'md5', 'SHA-256': 'sha256' };

/** Hex digest of `bytes` with a DataONE algorithm name (SHA-1, MD5, SHA-256). */
export function checksumOf(bytes: Uint8Array | string, algorithm = 'SHA-1'): string {
  const name = NODE_HASH[algorithm.toUpperCase()];
  if (!name) throw new Error(`unknown checksum algorithm '${algorithm}'`);
  return createHash(name).update(bytes).digest('hex');
}

export interface SysmetaOptions {
  pid: string;
  bytes: Uint8Array | string;
  rightsHolder: string;
  formatId?: string;
  algorithm?: string;
  /** Access policy rules; default: public read. Pass [] for a private object. */
  allow?: AccessRule[];
  seriesId?: string;
  obsoletes?: string;
  obsoletedBy?: string;
  fileName?: string;
  mediaType?: SystemMetadata['mediaType'];
  /** Applied last: anything else (e.g. a wrong size). */
  overrides?: Partial<SystemMetadata>;
}

/**
 * System metadata a client uploads for `bytes`: size and checksum computed, node-set fields
 * (serialVersion, submitter, dateUploaded, dateSysMetadataModified) left out.
 */
export function buildUploadSysmeta(o: SysmetaOptions): SystemMetadata {
  const bytes = typeof o.bytes === 'string' ? new TextEncoder().encode(o.bytes) : o.bytes;
  const algorithm = o.algorithm ?? 'SHA-1';
  const allow = o.allow ?? [{ subject: ['public'], permission: ['read'] }];
  const sm: SystemMetadata = {
    identifier: o.pid,
    formatId: o.formatId ?? 'text/csv',
    size: bytes.byteLength,
    checksum: { algorithm, value: checksumOf(bytes, algorithm) },
    rightsHolder: o.rightsHolder,
    ...(allow.length > 0 ? { accessPolicy: { allow } } : {}),
    replicationPolicy: { replicationAllowed: false, preferredMemberNode: [], blockedMemberNode: [] },
    ...(o.obsoletes !== undefined ? { obsoletes: o.obsoletes } : {}),
    ...(o.obsoletedBy !== undefined ? { obsoletedBy: o.obsoletedBy } : {}),
    replica: [],
    ...(o.seriesId !== undefined ? { seriesId: o.seriesId } : {}),
    ...(o.mediaType !== undefined ? { mediaType: o.mediaType } : {}),
    ...(o.fileName !== undefined ? { fileName: o.fileName } : {}),
  };
  return { ...sm, ...o.overrides };
}

/** The XML of `sm` for `version` (v1 drops the v2-only fields). */
export function encodeSysmeta(sm: SystemMetadata, version: ApiVersion = 'v2'): string {
  return SystemMetadataCodec.encode(sm, version);
}

/** The upload document for `o` in one step. */
export function buildSysmetaXml(o: SysmetaOptions, version: ApiVersion = 'v2'): string {
  return encodeSysmeta(buildUploadSysmeta(o), version);
}
