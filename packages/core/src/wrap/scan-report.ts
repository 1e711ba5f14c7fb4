/** What a scan changed (so far, when given to onProgress). */
export interface ScanReport {
  added: number;
  changed: number;
  removed: number;
  unchanged: number;
  skipped: Array<{ path: string; reason: string }>;
  durationMs: number;
  /** Entries listed so far, and bytes read to hash them (progress displays). */
  seen?: number;
  bytesHashed?: number;
  /** Entries whose checksum the storage knew without a read (S3 single-part ETag). */
  fromNative?: number;
  /** False when another scanner held the root's lease, so this scan did nothing. */
  leased?: boolean;
}

/** The part of a pino-style logger the scanner uses. */
export interface ScanLogger {
  info(fields: Record<string, unknown>, message: string): void;
  debug?(fields: Record<string, unknown>, message: string): void;
  error?(fields: Record<string, unknown>, message: string): void;
}

/** What a completed scan changed, in one log line (info when it changed anything, else debug). */
export function logScan(logger: ScanLogger | undefined, what: string, report: ScanReport): void {
  if (!logger) return;
  if (report.leased === false) {
    logger.debug?.({ root: what }, `${what}: skipped, another scanner holds the lease`);
    return;
  }
  const fields = { added: report.added, changed: report.changed, removed: report.removed, unchanged: report.unchanged, skipped: report.skipped.length, durationMs: Math.round(report.durationMs) };
  const message = `${what}: ${report.added} added, ${report.changed} changed, ${report.removed} removed, ${report.unchanged} unchanged, ${report.skipped.length} skipped`;
  if (report.added + report.changed + report.removed + report.skipped.length > 0 || !logger.debug) logger.info(fields, message);
  else logger.debug(fields, message);
}

export function emptyReport(): ScanReport {
  return { added: 0, changed: 0, removed: 0, unchanged: 0, skipped: [], durationMs: 0, seen: 0, bytesHashed: 0, fromNative: 0 };
}
