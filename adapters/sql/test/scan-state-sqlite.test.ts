// The wrap scan state (SqlScanState) and its lease on sqlite.
import { runScanStateSuite } from './helpers/scan-state-suite.js';

runScanStateSuite('sqlite');
