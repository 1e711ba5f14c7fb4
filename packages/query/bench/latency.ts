/**
 * MNQuery latency benchmark.
 *
 *   TSX_TSCONFIG_PATH=tsconfig.dev.json node --conditions=@memberkit/source --import tsx packages/query/bench/latency.ts [--docs 100000] [--pg]
 *
 * 1. Indexes N synthetic objects straight into the index (SQLite FTS5 file; with --pg also
 *    PostgreSQL at MEMBERKIT_TEST_PG_URL or postgres://postgres@127.0.0.1:5432/test).
 * 2. Runs a mix of Solr queries as the public caller (access filter on) and reports p50/p99
 *    per query and overall (engine level: parse + SQL + documents, no HTTP).
 * 3. Starts a real node over the same populated SQLite index and measures, through HTTP,
 *    MNStorage.create of an EML record and the time from the create request to the first
 *    query that finds it.
 */
import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildDocument, PostgresSearchIndex, SolrQueryEngine, SqliteSearchIndex, type IndexDoc, type QueryParamList, type SearchIndex } from '../src/index.js';
import { startQueryNode, sysmetaFor } from '../test/node.js';
import { recordXml, RECORDS } from '../test/corpus.js';
import type { ObjectRecord } from '@memberkit/types';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? (process.argv[i + 1] ?? fallback) : fallback;
};
const N = Number(arg('docs', '100000'));
const withPg = process.argv.includes('--pg');

// Deterministic pseudo-random numbers.
let seed = 42;
const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
const pick = <T>(a: readonly T[]): T => a[Math.floor(rnd() * a.length)]!;

const WORDS = ['soil', 'moisture', 'temperature', 'salinity', 'ocean', 'lake', 'forest', 'snow', 'ice', 'glacier', 'stream', 'chemistry', 'nitrate', 'birds', 'fish', 'coral', 'reef', 'kelp', 'plankton', 'carbon', 'flux', 'tundra', 'permafrost', 'precipitation', 'wind', 'sea', 'surface', 'river', 'discharge', 'sediment', 'vegetation', 'phenology', 'grassland', 'fire', 'drought', 'nutrient', 'algae', 'biomass', 'survey', 'census'];
const PLACES = ['Toolik Lake', 'Niwot Ridge', 'Hubbard Brook', 'Konza Prairie', 'Moorea', 'Palmer Station', 'Santa Barbara Channel', 'Gulf of Maine', 'Monterey Bay', 'Harvard Forest', 'Sevilleta', 'Jornada Basin'];
const KEYWORDS = ['soil moisture', 'permafrost', 'arctic', 'snow depth', 'stream chemistry', 'nitrate', 'birds', 'coral reef', 'kelp forest', 'zooplankton', 'carbon flux', 'OCEAN SALINITY', 'SEA ICE', 'BATHYMETRY', 'climate change', 'phenology'];
const FAMILY = ['Smith', 'Garcia', 'Chen', 'Okafor', 'Nilsson', 'Dubois', 'Haddad', 'Kowalski', 'Ramirez', 'Fraser', 'Harmon', 'Huss'];
const GIVEN = ['Anna', 'Wei', 'Maria', 'John', 'Leila', 'Carlos', 'Ingrid', 'Mark', 'Grace', 'Nnamdi', 'Hélène', 'Daniel'];
const META_FORMATS = ['eml://ecoinformatics.org/eml-2.1.1', 'https://eml.ecoinformatics.org/eml-2.2.0', 'http://www.isotc211.org/2005/gmd'];
const DATA_FORMATS = ['text/csv', 'application/netcdf', 'image/tiff', 'application/zip'];

function syntheticDoc(i: number): IndexDoc {
  const kind = rnd();
  const meta = kind < 0.4;
  const map = !meta && kind < 0.5;
  const formatId = meta ? pick(META_FORMATS) : map ? 'http://www.openarchives.org/ore/terms' : pick(DATA_FORMATS);
  const uploaded = new Date(Date.UTC(2010, 0, 1) + Math.floor(rnd() * 15 * 365 * 86_400_000));
  const owner = `CN=user${Math.floor(rnd() * 200)},O=Bench,DC=org`;
  const isPrivate = rnd() < 0.1;
  const pid = `bench.${i}`;
  const record: ObjectRecord = {
    sysmeta: {
      identifier: pid,
      formatId,
      size: Math.floor(rnd() * 10_000_000),
      checksum: { algorithm: 'MD5', value: i.toString(16).padStart(32, '0') },
      rightsHolder: owner,
      submitter: owner,
      ...(isPrivate ? {} : { accessPolicy: { allow: [{ subject: ['public'], permission: ['read' as const] }] } }),
      replica: [],
      serialVersion: 1,
      dateUploaded: uploaded,
      dateSysMetadataModified: uploaded,
      archived: rnd() < 0.02,
      ...(i % 50 === 1 ? { obsoletedBy: `bench.${i + 1}` } : {}),
      ...(meta ? {} : { fileName: `${pick(WORDS)}_${i}.${formatId === 'text/csv' ? 'csv' : 'dat'}` }),
    },
    storageKey: pid,
    isReplica: false,
  };
  if (!meta) return buildDocument(record);
  const title = `${pick(WORDS)} ${pick(WORDS)} and ${pick(WORDS)} at ${pick(PLACES)}, ${1980 + Math.floor(rnd() * 40)}`;
  const abstract = Array.from({ length: 40 }, () => pick(WORDS)).join(' ');
  const begin = 1950 + Math.floor(rnd() * 70);
  const west = -180 + rnd() * 300;
  const south = -80 + rnd() * 140;
  const creators = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => {
    const g = pick(GIVEN);
    const f = pick(FAMILY);
    return { name: `${g} ${f}`, givenName: g, familyName: f };
  });
  return buildDocument(
    record,
    {
      formatId,
      title,
      abstract,
      creators,
      keywords: [pick(KEYWORDS), pick(KEYWORDS), pick(KEYWORDS)].filter((k, j, a) => a.indexOf(k) === j),
      temporal: [{ begin: `${begin}-01-01`, end: `${begin + Math.floor(rnd() * 30)}-12-31` }],
      spatial: [{ west, east: west + rnd() * 10, south, north: south + rnd() * 10 }],
      alternateIdentifiers: [],
    },
    `${title} ${abstract} ${creators.map((c) => c.name).join(' ')}`,
  );
}

const QUERIES: Array<[string, QueryParamList]> = [
  ['*:* rows=10', [['q', '*:*']]],
  ['title:soil', [['q', 'title:soil'], ['fl', 'id,title']]],
  ['phrase "sea surface"', [['q', '"sea surface"']]],
  ['keywords:"soil moisture"', [['q', 'keywords:"soil moisture"'], ['fl', 'id']]],
  ['formatId:eml* wildcard', [['q', 'formatId:eml*'], ['fl', 'id,formatId']]],
  ['title:temp* prefix', [['q', 'title:temp*']]],
  ['date+bbox ranges', [['q', 'beginDate:[2000-01-01T00:00:00Z TO *] AND northBoundCoord:[30 TO 60]'], ['fl', 'id']]],
  ['fq -obsoletedBy:*, sort', [['q', 'text:permafrost'], ['fq', 'formatType:METADATA'], ['fq', '-obsoletedBy:*'], ['sort', 'dateUploaded desc'], ['rows', '20']]],
  ['facet formatId rows=0', [['q', '*:*'], ['rows', '0'], ['facet', 'true'], ['facet.field', 'formatId']]],
  ['id:bench.54321', [['q', 'id:bench.54321']]],
  ['origin:"Leila Haddad" AND lake', [['q', 'origin:"Leila Haddad" AND lake']]],
  ['-title:* (data objects)', [['q', '-title:*'], ['rows', '10']]],
];

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

async function fill(index: SearchIndex & { upsertMany(docs: readonly IndexDoc[]): unknown; analyze(): unknown }, label: string): Promise<void> {
  seed = 42;
  const t0 = performance.now();
  const batch: IndexDoc[] = [];
  for (let i = 0; i < N; i++) {
    batch.push(syntheticDoc(i));
    if (batch.length === 2000) {
      await index.upsertMany(batch.splice(0));
    }
  }
  if (batch.length) await index.upsertMany(batch);
  await index.analyze();
  console.log(`${label}: indexed ${N} objects in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

async function measure(index: SearchIndex, label: string): Promise<void> {
  const engine = new SolrQueryEngine(index);
  const all: number[] = [];
  const per = new Map<string, number[]>();
  const rounds = 30;
  for (const [, params] of QUERIES) await engine.query(params, { readableBy: ['public'] }); // warm-up
  for (let r = 0; r < rounds; r++) {
    for (const [name, params] of QUERIES) {
      const t0 = performance.now();
      await engine.query(params, { readableBy: ['public', 'authenticatedUser', 'CN=user7,O=Bench,DC=org'] });
      const ms = performance.now() - t0;
      all.push(ms);
      per.set(name, [...(per.get(name) ?? []), ms]);
    }
  }
  console.log(`\n${label}: query latency over ${N} objects (${all.length} queries, access filter on)`);
  for (const [name, xs] of per) console.log(`  ${name.padEnd(34)} p50 ${pct(xs, 50).toFixed(1).padStart(7)} ms   p99 ${pct(xs, 99).toFixed(1).padStart(7)} ms`);
  console.log(`  ${'ALL'.padEnd(34)} p50 ${pct(all, 50).toFixed(1).padStart(7)} ms   p99 ${pct(all, 99).toFixed(1).padStart(7)} ms`);
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'memberkit-query-bench-'));
  const file = join(dir, 'index.sqlite');
  try {
    const sqlite = new SqliteSearchIndex({ file });
    await sqlite.open();
    await fill(sqlite, 'SQLite FTS5');
    await measure(sqlite, 'SQLite FTS5');
    await sqlite.close();

    if (withPg) {
      const url = process.env.MEMBERKIT_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
      const pgIndex = new PostgresSearchIndex({ url, schema: `mkq_bench_${process.pid}` });
      await pgIndex.open();
      try {
        await fill(pgIndex, 'PostgreSQL');
        await measure(pgIndex, 'PostgreSQL');
      } finally {
        await pgIndex.drop();
        await pgIndex.close();
      }
    }

    // create -> searchable through HTTP, on a node whose index holds the N objects.
    const node = await startQueryNode({ index: { kind: 'sqlite', file } });
    const creates: number[] = [];
    const searchable: number[] = [];
    const writer = node.client('writer');
    for (let i = 0; i < 30; i++) {
      const pid = `fresh.bench.${i}`;
      const xml = recordXml({ ...RECORDS[0]!, title: `Benchmark record number${i} of kelp` });
      const t0 = performance.now();
      await writer.create(pid, xml, sysmetaFor(pid, xml, 'eml://ecoinformatics.org/eml-2.1.1', node.subjects.writer));
      creates.push(performance.now() - t0);
      for (;;) {
        const res = await fetch(`${node.baseUrl}/v2/query/solr/?q=title:number${i}&fl=id&wt=json`);
        const body = (await res.json()) as { response: { numFound: number } };
        if (body.response.numFound === 1) break;
      }
      searchable.push(performance.now() - t0);
    }
    await node.stop();
    console.log(`\nHTTP over ${N} indexed objects (30 creates of EML records):`);
    console.log(`  MNStorage.create          p50 ${pct(creates, 50).toFixed(1)} ms   p99 ${pct(creates, 99).toFixed(1)} ms`);
    console.log(`  create -> searchable      p50 ${pct(searchable, 50).toFixed(1)} ms   p99 ${pct(searchable, 99).toFixed(1)} ms   (first query after create already finds it)`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
