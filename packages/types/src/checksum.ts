import { createHash, type Hash } from 'node:crypto';

/**
 * Checksum algorithm names as they appear in system metadata. The v1 schema lists SHA-1 and
 * MD5; SHA-256 is accepted and computed by the node too (later federation members use it).
 */
export const CHECKSUM_ALGORITHMS = ['SHA-1', 'MD5', 'SHA-256'] as const;
export type ChecksumAlgorithmName = (typeof CHECKSUM_ALGORITHMS)[number];

/** The algorithm used when a caller names none (getChecksum without checksumAlgorithm). */
export const DEFAULT_CHECKSUM_ALGORITHM: ChecksumAlgorithmName = 'SHA-1';

const ALIASES: Record<string, ChecksumAlgorithmName> = {
  'SHA-1': 'SHA-1', SHA1: 'SHA-1', 'SHA': 'SHA-1',
  MD5: 'MD5', 'MD-5': 'MD5',
  'SHA-256': 'SHA-256', SHA256: 'SHA-256',
};

/** Canonical name for an algorithm written any common way (`sha1`, `SHA-1`, `md5`), or undefined. */
export function normalizeChecksumAlgorithm(name: string): ChecksumAlgorithmName | undefined {
  return ALIASES[name.trim().toUpperCase()];
}

/** Node's crypto name of each algorithm. */
export const NODE_HASH_NAMES: Readonly<Record<ChecksumAlgorithmName, string>> = { 'SHA-1': 'sha1', MD5: 'md5', 'SHA-256': 'sha256' };

/** A node:crypto Hash for a protocol algorithm name. */
export function createChecksumHash(algorithm: ChecksumAlgorithmName): Hash {
  return createHash(NODE_HASH_NAMES[algorithm]);
}

/** Digests are compared case-insensitively (hex). */
export function sameDigest(a: string, b: string): boolean {
  return a.trim().toLowerCase() === b.trim().toLowerCase();
}
