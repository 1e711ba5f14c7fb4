// The testkit's wrap suite (tree) with the catalogue and scan state on mysql.
import { runWrapSuiteOn } from './helpers/scan-state-wrap.js';

runWrapSuiteOn('mysql');
