// Mapping mode on postgres: a legacy catalogue (datasets, files, a view, versions) served end to end.
import { runMappingSuite } from './helpers/mapping-suite.js';

runMappingSuite('postgres');
