// Native mode on mysql: the testkit CatalogueAdapter and EventLogStore suites and the store's
// own cases (cross-pool races, migrations, deep pages, jobs), in a fresh isolated database.
import { runNativeSuites } from './helpers/native-suites.js';

runNativeSuites('mysql');
