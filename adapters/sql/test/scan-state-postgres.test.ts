// The wrap scan state (SqlScanState) and its lease on postgres.
import { runScanStateSuite } from './helpers/scan-state-suite.js';

runScanStateSuite('postgres');
