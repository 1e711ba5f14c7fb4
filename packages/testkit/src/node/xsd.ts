import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * XSD validation of DataONE documents with xmllint (libxml2), against the official schemas
 * shipped in `packages/testkit/schemas`. A body whose root is `error` is checked against
 * dataoneErrors.xsd; anything else against dataoneTypes_v2.0.xsd, which imports the v1
 * types (identifier, checksum, objectList... keep the v1 namespace on both API versions).
 *
 * One xmllint process validates a whole batch (about 20 ms a call, nearly all of it start-up
 * and schema loading), so callers collect bodies and validate them together.
 */

/** The schema folder, found from this module (src/node or dist/node), never from an absolute path. */
export const SCHEMA_DIR = resolve(import.meta.dirname, '..', '..', 'schemas');
export const TYPES_SCHEMA = join(SCHEMA_DIR, 'dataoneTypes_v2.0.xsd');
export const ERRORS_SCHEMA = join(SCHEMA_DIR, 'dataoneErrors.xsd');

export interface XmlDocument {
  /** Where the body came from (e.g. `GET /v2/meta/x -> 200`), for failure messages. */
  label: string;
  xml: string;
}

export interface XmlValidationFailure {
  label: string;
  schema: string;
  /** xmllint's messages for this document. */
  messages: string;
  xml: string;
}

/** Local name of the root element, or undefined when the text has none. */
export function rootElementName(xml: string): string | undefined {
  const body = xml.replace(/^\uFEFF/, '').replace(/<\?[\s\S]*?\?>/g, '').replace(/<!--[\s\S]*?-->/g, '');
  const m = /<\s*([A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)/.exec(body);
  return m?.[2];
}

/** True when the body looks like an XML document (what the suite must validate). */
export function looksLikeXml(text: string, contentType?: string | null): boolean {
  if (contentType && /[/+]xml\b/i.test(contentType)) return true;
  return /^\uFEFF?\s*</.test(text);
}

function run(schema: string, files: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((done, fail) => {
    execFile('xmllint', ['--noout', '--nonet', '--schema', schema, ...files], { maxBuffer: 64 * 1024 * 1024 }, (err, _stdout, stderr) => {
      if (err && typeof (err as NodeJS.ErrnoException).code === 'string') {
        fail(new Error(`xmllint could not run (${(err as NodeJS.ErrnoException).code}); install libxml2-utils: ${err.message}`));
        return;
      }
      done({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stderr: String(stderr) });
    });
  });
}

/**
 * Validate `docs` (errors schema or types schema by root element) with one xmllint call per
 * schema. Resolves with the failures (empty when every document is valid).
 */
export async function validateXmlDocuments(docs: readonly XmlDocument[]): Promise<XmlValidationFailure[]> {
  if (docs.length === 0) return [];
  const dir = await mkdtemp(join(tmpdir(), 'memberkit-xsd-'));
  try {
    const bySchema = new Map<string, Array<{ doc: XmlDocument; file: string }>>();
    await Promise.all(
      docs.map(async (doc, i) => {
        const schema = rootElementName(doc.xml) === 'error' ? ERRORS_SCHEMA : TYPES_SCHEMA;
        const file = join(dir, `doc-${i}.xml`);
        await writeFile(file, doc.xml, 'utf8');
        const list = bySchema.get(schema) ?? [];
        list.push({ doc, file });
        bySchema.set(schema, list);
      }),
    );
    const failures: XmlValidationFailure[] = [];
    for (const [schema, entries] of bySchema) {
      const { code, stderr } = await run(schema, entries.map((e) => e.file));
      if (code === 0) continue;
      for (const { doc, file } of entries) {
        const lines = stderr.split('\n').filter((l) => l.startsWith(file + ':') || l.startsWith(file + ' '));
        const failed = lines.some((l) => l === `${file} fails to validate` || /parser error|validity error|error :/.test(l));
        const validated = lines.includes(`${file} validates`);
        if (failed || !validated) {
          failures.push({ label: doc.label, schema: schema.slice(SCHEMA_DIR.length + 1), messages: lines.join('\n').replaceAll(file, '<body>') || stderr, xml: doc.xml });
        }
      }
    }
    return failures;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Validate one document; resolves with the failure, or undefined when valid. */
export async function validateXml(xml: string, label = 'document'): Promise<XmlValidationFailure | undefined> {
  return (await validateXmlDocuments([{ label, xml }]))[0];
}

/** Human-readable report of failures (empty string when none). */
export function describeFailures(failures: readonly XmlValidationFailure[]): string {
  return failures
    .map((f) => `${f.label}: not valid against ${f.schema}\n${f.messages}\n--- body ---\n${f.xml.length > 2000 ? f.xml.slice(0, 2000) + '…' : f.xml}`)
    .join('\n\n');
}

/**
 * Collects every XML body a test receives; `flush()` validates the batch and throws one
 * error listing all invalid documents. Call it in afterEach so a failure lands on the test
 * that received the body.
 */
export class XmlBodyCollector {
  private pending: XmlDocument[] = [];
  /** Documents validated so far (for reporting). */
  validated = 0;

  add(label: string, xml: string): void {
    this.pending.push({ label, xml });
  }

  async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    const failures = await validateXmlDocuments(batch);
    this.validated += batch.length;
    if (failures.length > 0) throw new Error(`${failures.length} XML bod${failures.length === 1 ? 'y is' : 'ies are'} not schema-valid:\n${describeFailures(failures)}`);
  }
}
