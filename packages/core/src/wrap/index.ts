export { WrapScanner, createWrapScanner, type WrapScannerOptions, type ScanOptions, type ScanPause, type WatchOptions, type CatalogueCommitter } from './wrap-scanner.js';
export { logScan, type ScanReport, type ScanLogger } from './scan-report.js';
export { isWrapStorage, pidFromPath, type WrapStorage, type EntryDigest } from './wrap-storage.js';
