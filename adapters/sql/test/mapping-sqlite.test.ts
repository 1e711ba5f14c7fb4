// Mapping mode on sqlite: a legacy catalogue (datasets, files, a view, versions) served end to end.
import { runMappingSuite } from './helpers/mapping-suite.js';

runMappingSuite('sqlite');
