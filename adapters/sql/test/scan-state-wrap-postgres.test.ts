// The testkit's wrap suite (tree) with the catalogue and scan state on postgres.
import { runWrapSuiteOn } from './helpers/scan-state-wrap.js';

runWrapSuiteOn('postgres');
