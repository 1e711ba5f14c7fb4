// The legacy-catalogue example as shipped (examples/legacy-catalogue: schema.sql, the mapping
// of memberkit.config.json, files/) on SQLite, PostgreSQL and MariaDB: it loads and is served;
// and a catalogue that maps two rows to one identifier is refused at open, on a scan
// (warmChecksums) and on a read, naming the identifier and what to fix.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTreeStorage } from '@memberkit/adapter-filesystem';
import { AdapterError } from '@memberkit/types';
import { createMappedCatalogue, type SqlDialectName, type SqlMapping } from '../src/index.js';
import { freshDatabase, type FreshDatabase } from './helpers/databases.js';

const EXAMPLE = join(import.meta.dirname, '..', 'examples', 'legacy-catalogue');

/** schema.sql as statements (comments dropped, split at the `;` ending a line). */
function schemaStatements(): string[] {
  const text = readFileSync(join(EXAMPLE, 'schema.sql'), 'utf8').replace(/--.*$/gm, '');
  return text.split(/;\s*$/m).map((s) => s.trim()).filter(Boolean);
}

function exampleMapping(): SqlMapping {
  const config = JSON.parse(readFileSync(join(EXAMPLE, 'memberkit.config.json'), 'utf8')) as { catalogue: { mapping: SqlMapping } };
  return config.catalogue.mapping;
}

async function refusal(p: Promise<unknown>): Promise<AdapterError> {
  const e = await p.then(() => undefined, (err: unknown) => err);
  expect(AdapterError.is(e), `expected a refusal, got ${String(e)}`).toBe(true);
  return e as AdapterError;
}

for (const dialect of ['sqlite', 'postgres', 'mysql'] as SqlDialectName[]) {
  describe(`the legacy-catalogue example on ${dialect}`, () => {
    let db: FreshDatabase;
    beforeAll(async () => {
      db = await freshDatabase(dialect);
      for (const statement of schemaStatements()) await db.exec(statement);
    });
    afterAll(async () => {
      await db?.drop();
    });
    const open = async () => {
      const m = createMappedCatalogue({ dialect, connection: db.connection, mapping: exampleMapping(), storage: createTreeStorage({ root: join(EXAMPLE, 'files') }) });
      return m;
    };

    it('loads with the shipped schema.sql and serves its versions', async () => {
      const m = await open();
      await m.open();
      try {
        const page = await m.catalogue.list({ start: 0, count: 10 });
        expect(page.items.map((r) => r.sysmeta.identifier).sort()).toEqual(['lake-temps.v1/temps.csv', 'lake-temps.v2/README.txt', 'lake-temps.v2/temps.csv', 'soil-cores.v1/cores.csv']);
        const v2 = (await m.catalogue.get('lake-temps.v2/temps.csv'))!;
        expect(v2.sysmeta.obsoletes).toBe('lake-temps.v1/temps.csv');
        expect(v2.sysmeta.dateUploaded.toISOString()).toBe('2024-02-10T14:30:00.000Z');
        expect((await m.catalogue.get('lake-temps.v1/temps.csv'))!.sysmeta).toMatchObject({ obsoletedBy: 'lake-temps.v2/temps.csv', checksum: { algorithm: 'MD5', value: 'bcd3ca01a5e8212777af0d3dd38cd190' } });
        expect((await m.catalogue.list({ start: 0, count: 10, readableBy: ['public'] })).total).toBe(3);
      } finally {
        await m.close();
      }
    });

    it('refuses a catalogue that maps two rows to one identifier: at open, on a scan and on a read', async () => {
      const m = await open();
      await m.open();
      try {
        // A second temps.csv row in dataset 2: the view now gives lake-temps.v2/temps.csv twice.
        await db.exec("INSERT INTO files VALUES (5, 2, 'temps.csv', 'lake-temps/v2/temps.csv', 'text/csv', 80, NULL, '2024-02-11 10:00:00')");
        const scan = await refusal(m.catalogue.warmChecksums());
        expect(scan.kind).toBe('invalid');
        expect(scan.message).toContain('"lake-temps.v2/temps.csv" (2 rows)');
        const read = await refusal(m.catalogue.get('lake-temps.v2/temps.csv'));
        expect(read.message).toContain('"lake-temps.v2/temps.csv"');
        // Other identifiers still answer.
        expect(await m.catalogue.get('soil-cores.v1/cores.csv')).toBeDefined();
      } finally {
        await m.close();
      }
      const again = await open();
      const e = await refusal(again.open());
      expect(e.message).toBe(
        'the legacy catalogue maps several rows to one identifier: "lake-temps.v2/temps.csv" (2 rows). '
        + 'Each row needs its own PID: fix catalogue.mapping.pid (column pid of the view catalogue_files) or the view catalogue_files so that it is unique.',
      );
      await db.exec('DELETE FROM files WHERE id = 5');
      const fixed = await open();
      await fixed.open();
      await fixed.close();
    });
  });
}

it('memberkit serve refuses to start on the example with a duplicated identifier, naming it (one line)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'memberkit-legacy-dup-'));
  try {
    cpSync(join(EXAMPLE, 'files'), join(dir, 'files'), { recursive: true });
    const config = JSON.parse(readFileSync(join(EXAMPLE, 'memberkit.config.json'), 'utf8')) as { server: { port: number } };
    config.server.port = 0;
    writeFileSync(join(dir, 'memberkit.config.json'), JSON.stringify(config));
    const db = new Database(join(dir, 'legacy.db'));
    for (const statement of schemaStatements()) db.exec(statement);
    db.exec("INSERT INTO files VALUES (5, 2, 'temps.csv', 'lake-temps/v2/temps.csv', 'text/csv', 80, NULL, '2024-02-11 10:00:00')");
    db.close();
    const ROOT = join(import.meta.dirname, '..', '..', '..');
    const run = spawnSync(process.execPath, ['--conditions=@memberkit/source', '--import', 'tsx', join(ROOT, 'packages/cli/src/bin.ts'), 'serve', dir], {
      cwd: ROOT, env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, 'tsconfig.dev.json') }, encoding: 'utf8', timeout: 60_000,
    });
    expect(run.status).not.toBe(0);
    const line = run.stderr.split('\n').find((l) => l.includes('several rows to one identifier'));
    expect(line, run.stderr + run.stdout).toBeDefined();
    expect(line).toContain('"lake-temps.v2/temps.csv" (2 rows)');
    expect(line).toContain('catalogue.mapping.pid');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
