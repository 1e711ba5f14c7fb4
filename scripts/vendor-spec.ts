// Refreshes the vendored DataONE specification (spec/ and packages/testkit/schemas) from a
// folder laid out as detail-codes.tsv, formats/objectFormatListV2.xml and schemas/*.xsd,
// then regenerates packages/types/src/generated/* from the new copies.
// Run: npm run vendor:spec -- <path-to-spec>
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const root = join(import.meta.dirname, '..');
const from = process.argv[2];
if (!from) {
  console.error('usage: npm run vendor:spec -- <path-to-spec>  (a folder with detail-codes.tsv, formats/objectFormatListV2.xml, schemas/*.xsd)');
  process.exit(2);
}
const source = resolve(from);

/** Vendored path (relative to the repository) ← path in the spec folder. */
const files: Array<[string, string]> = [
  ['spec/detail-codes.tsv', 'detail-codes.tsv'],
  ['spec/formats/objectFormatListV2.xml', 'formats/objectFormatListV2.xml'],
];
const schemas = join(source, 'schemas');
if (existsSync(schemas)) {
  for (const name of readdirSync(schemas).filter((n) => n.endsWith('.xsd')).sort()) files.push([`packages/testkit/schemas/${name}`, `schemas/${name}`]);
}

const missing = files.filter(([, rel]) => !existsSync(join(source, rel))).map(([, rel]) => rel);
if (missing.length > 0 || !existsSync(schemas)) {
  console.error(`${source} is not a spec folder: missing ${[...missing, ...(existsSync(schemas) ? [] : ['schemas/'])].join(', ')}`);
  process.exit(1);
}

const digest = (file: string): string | undefined => (existsSync(file) ? createHash('sha256').update(readFileSync(file)).digest('hex') : undefined);
for (const [to, rel] of files) {
  const target = join(root, to);
  const before = digest(target);
  mkdirSync(dirname(target), { recursive: true });
  copyFileSync(join(source, rel), target);
  console.log(`${before === undefined ? 'added    ' : before === digest(target) ? 'unchanged' : 'updated  '} ${to}`);
}

// The generated tables follow the vendored copies.
await import('./generate-types-data.js');
