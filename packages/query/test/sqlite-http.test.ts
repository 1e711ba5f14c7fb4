import { querySuite } from './suite.js';

querySuite('SQLite FTS5', async () => ({ index: { kind: 'sqlite', file: ':memory:' } }));
