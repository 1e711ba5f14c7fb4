import type { EventRecord, ObjectRecord, StoredSystemMetadata } from '@memberkit/types';

/**
 * Identifiers that break naive stores: path traversal, URL syntax, SQL and LIKE
 * metacharacters, backslashes, NFC/NFD twins, case twins, non-BMP characters, leading
 * zeros and an 800-character string. PIDs are arbitrary text; each MUST round-trip as is.
 */
export const HOSTILE_IDENTIFIERS: readonly string[] = [
  '../x',
  'a/../../b',
  '/etc/passwd',
  '..\\x',
  'C:\\Windows\\system32',
  'a%2Fb',
  'q?x=1#frag',
  'doi:10.5063/F1ABC123',
  'urn:uuid:8b2e0a0e-4d0b-4c5f-9a53-0f8d2f1e6a01',
  "'; DROP TABLE objects; --",
  '100%_done',
  'spaces  and\ttabs',
  '0012',
  'caf\u00e9',          // NFC
  'cafe\u0301',         // NFD twin
  'CAFE',
  'cafe',
  '\u{1F600}\u{1F4BE} ünïcödé 数据',
  'x'.repeat(800),
];

/** Storage keys that must never reach outside an adapter's root. */
export const HOSTILE_STORAGE_KEYS: readonly string[] = [
  '../x',
  'a/../../b',
  '/etc/passwd',
  `${'../'.repeat(40)}etc/passwd`,
  `${'..\\'.repeat(40)}etc\\passwd`,
  '..\\x',
  'x\u0000y',
  '/etc/passwd\u0000.bin',
  '',
  '.',
  '..',
  './',
  '/',
  '%2e%2e/%2e%2e/etc/passwd',
  'file:///etc/passwd',
];

let counter = 0;

/** A fixed instant plus `ms` milliseconds (millisecond precision matters). */
export function instant(ms = 0): Date {
  return new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 678) + ms);
}

/**
 * A valid StoredSystemMetadata for `pid` with every field set (v2 superset), overridable.
 * Pass `undefined` for a field in `overrides` to leave it out.
 */
export function buildSystemMetadata(pid: string, overrides: Partial<StoredSystemMetadata> = {}): StoredSystemMetadata {
  const base: StoredSystemMetadata = {
    serialVersion: 1,
    identifier: pid,
    formatId: 'text/csv',
    size: 1234,
    checksum: { algorithm: 'SHA-256', value: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855' },
    submitter: 'CN=Submitter,O=Test,C=US,DC=cilogon,DC=org',
    rightsHolder: 'http://orcid.org/0000-0002-1825-0097',
    accessPolicy: {
      allow: [
        { subject: ['public'], permission: ['read'] },
        { subject: ['CN=editors,DC=dataone,DC=org', 'CN=Ünïcode Person'], permission: ['write', 'changePermission'] },
      ],
    },
    replicationPolicy: {
      replicationAllowed: true,
      numberReplicas: 2,
      preferredMemberNode: ['urn:node:A', 'urn:node:B'],
      blockedMemberNode: ['urn:node:C'],
    },
    obsoletes: `${pid}.previous`,
    obsoletedBy: `${pid}.next`,
    archived: false,
    dateUploaded: instant(-86_400_000),
    dateSysMetadataModified: instant(),
    originMemberNode: 'urn:node:ORIGIN',
    authoritativeMemberNode: 'urn:node:AUTH',
    replica: [
      { replicaMemberNode: 'urn:node:ORIGIN', replicationStatus: 'completed', replicaVerified: instant(-3_600_000) },
      { replicaMemberNode: 'urn:node:B', replicationStatus: 'queued', replicaVerified: instant(-1) },
    ],
    seriesId: `${pid}.series`,
    mediaType: { name: 'text/csv', property: [{ name: 'charset', value: 'utf-8' }, { name: 'header', value: 'present' }] },
    fileName: 'données ✓.csv',
  };
  const merged: Record<string, unknown> = { ...base, ...overrides };
  for (const [k, v] of Object.entries(overrides)) if (v === undefined) delete merged[k];
  return merged as unknown as StoredSystemMetadata;
}

/** A StoredSystemMetadata with only the required fields (no optional element at all). */
export function buildMinimalSystemMetadata(pid: string, overrides: Partial<StoredSystemMetadata> = {}): StoredSystemMetadata {
  return {
    serialVersion: 1,
    identifier: pid,
    formatId: 'application/octet-stream',
    size: 0,
    checksum: { algorithm: 'MD5', value: 'd41d8cd98f00b204e9800998ecf8427e' },
    submitter: 'CN=Submitter',
    rightsHolder: 'CN=Owner',
    archived: false,
    dateUploaded: instant(),
    dateSysMetadataModified: instant(),
    replica: [],
    ...overrides,
  };
}

/**
 * An ObjectRecord for `pid`: minimal system metadata (no seriesId, no chain links, so
 * records do not collide by accident) unless `sysmeta` overrides are given.
 */
export function buildObjectRecord(
  pid: string,
  options: { sysmeta?: Partial<StoredSystemMetadata>; storageKey?: string; isReplica?: boolean; full?: boolean } = {},
): ObjectRecord {
  const sysmeta = options.full ? buildSystemMetadata(pid, options.sysmeta) : buildMinimalSystemMetadata(pid, options.sysmeta);
  return { sysmeta, storageKey: options.storageKey ?? `objects/${++counter}/${encodeURIComponent(pid).slice(0, 64)}`, isReplica: options.isReplica ?? false };
}

/** An EventRecord with every field set, overridable. */
export function buildEventRecord(overrides: Partial<EventRecord> = {}): EventRecord {
  return {
    identifier: 'doi:10.5063/F1ABC123',
    ipAddress: '192.0.2.17',
    userAgent: 'memberkit-testkit/1 (ünï)',
    subject: 'CN=Reader,O=Test,C=US',
    event: 'read',
    dateLogged: instant(),
    nodeIdentifier: 'urn:node:TEST',
    ...overrides,
  };
}
