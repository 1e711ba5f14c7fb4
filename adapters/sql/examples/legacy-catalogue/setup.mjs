// Creates legacy.db (SQLite) from schema.sql, next to this file. Run from the repository root:
//   node adapters/sql/examples/legacy-catalogue/setup.mjs
import { readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3');
const file = join(import.meta.dirname, 'legacy.db');
for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true });
const db = new Database(file);
db.exec(readFileSync(join(import.meta.dirname, 'schema.sql'), 'utf8'));
db.close();
console.log(`created ${file}`);
