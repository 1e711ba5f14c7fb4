// The wrap scan state (SqlScanState) and its lease on mysql.
import { runScanStateSuite } from './helpers/scan-state-suite.js';

runScanStateSuite('mysql');
