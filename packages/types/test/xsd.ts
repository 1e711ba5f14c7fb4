/**
 * Offline XSD validation with xmllint. Many documents are validated in one xmllint run
 * (one temp file each, all named on one command line) so a suite stays fast.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const SCHEMA_DIR = join(import.meta.dirname, '..', '..', 'testkit', 'schemas');
/** Validates v1, v1.1 and v2.0 documents (it imports the other two). */
export const TYPES_XSD = join(SCHEMA_DIR, 'dataoneTypes_v2.0.xsd');
export const ERRORS_XSD = join(SCHEMA_DIR, 'dataoneErrors.xsd');

export type SchemaKind = 'types' | 'errors';

export interface XsdResult {
  valid: boolean;
  /** xmllint's messages about this document (empty when valid). */
  errors: string[];
}

function schemaPath(kind: SchemaKind): string {
  return kind === 'errors' ? ERRORS_XSD : TYPES_XSD;
}

/** Validate many documents against one schema with a single xmllint process. */
export function validateMany(docs: readonly string[], kind: SchemaKind = 'types'): XsdResult[] {
  if (docs.length === 0) return [];
  const dir = mkdtempSync(join(tmpdir(), 'memberkit-xsd-'));
  try {
    const files = docs.map((doc, i) => {
      const f = join(dir, `doc${i}.xml`);
      writeFileSync(f, doc, 'utf8');
      return f;
    });
    const r = spawnSync('xmllint', ['--noout', '--schema', schemaPath(kind), ...files], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    if (r.error) throw r.error;
    const out = `${r.stdout}\n${r.stderr}`;
    return files.map((f) => {
      const lines = out.split('\n').filter((l) => l.startsWith(f + ':') || l.startsWith(f + ' '));
      const valid = lines.some((l) => l === `${f} validates`);
      const errors = lines.filter((l) => l !== `${f} validates`).map((l) => l.slice(dir.length + 1));
      return { valid, errors };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Validate one document; the result lists xmllint's complaints. */
export function validateXml(xml: string, kind: SchemaKind = 'types'): XsdResult {
  return validateMany([xml], kind)[0]!;
}

/** Throw with xmllint's messages unless every document is schema-valid. */
export function assertValidMany(docs: readonly string[], kind: SchemaKind = 'types', labels?: readonly string[]): void {
  const results = validateMany(docs, kind);
  const bad = results
    .map((r, i) => ({ r, i }))
    .filter(({ r }) => !r.valid)
    .map(({ r, i }) => `${labels?.[i] ?? `document ${i}`}:\n  ${r.errors.join('\n  ')}\n  ${docs[i]!.slice(0, 2000)}`);
  if (bad.length) throw new Error(`XSD validation failed for ${bad.length} document(s):\n${bad.join('\n')}`);
}
