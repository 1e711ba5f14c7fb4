import { parseDocument } from './xml.js';
import type { DocumentBudgets } from './budgets.js';
import { isEmlFormat, readEml } from './eml.js';
import { isIsoFormat, readIso } from './iso.js';
import { isDataCiteFormat, readDataCite } from './datacite.js';
import { isDublinCoreFormat, readDublinCore } from './dublin-core.js';
import { isFgdcFormat, readFgdc } from './fgdc.js';
import { isDryadFormat, readDryad } from './dryad.js';
import { isMercuryFormat, readMercury } from './mercury.js';
import { isSchemaOrgFormat, readSchemaOrgResult } from './schema-org.js';
import { budgetsOf } from './budgets.js';
import { decodeDocument, type Node } from './xml.js';
import type { ScienceMetadata, ScienceRead } from './types.js';

/**
 * XML readers by format, in one place: EML 2.x, ISO 19139, DataCite, Dublin Core, FGDC
 * CSDGM (and ESRI), Dryad, Mercury. schema.org JSON-LD is read apart (not XML).
 */
const XML_READERS: Array<[(formatId: string) => boolean, (formatId: string, root: Node) => ScienceMetadata]> = [
  [isEmlFormat, readEml],
  [isIsoFormat, readIso],
  [isDataCiteFormat, readDataCite],
  [isDublinCoreFormat, readDublinCore],
  [isFgdcFormat, readFgdc],
  [isDryadFormat, readDryad],
  [isMercuryFormat, readMercury],
];

/** True for the science metadata formats this package reads. */
export function isScienceMetadataFormat(formatId: string): boolean {
  return isSchemaOrgFormat(formatId) || XML_READERS.some(([is]) => is(formatId));
}

/**
 * A DOCTYPE naming only an external DTD (`<!DOCTYPE metadata SYSTEM ".../esriprof80.dtd">`,
 * as ESRI and older FGDC writers put) declares nothing this reader would load: it is
 * blanked out so that the document can be read. A DOCTYPE with an internal subset (`[`),
 * where entities are declared, stays and is refused by the parser.
 */
function withoutExternalDoctype(input: string | Uint8Array, maxBytes: number): string | Uint8Array {
  const head = typeof input === 'string' ? input.slice(0, 4096) : Buffer.from(input.buffer, input.byteOffset, Math.min(input.byteLength, 4096)).toString('latin1');
  if (!head.includes('<!DOCTYPE')) return input;
  const text = typeof input === 'string' ? input : decodeDocument(input, maxBytes);
  if (text === undefined) return input;
  const m = /<!DOCTYPE\s+[\w:.-]+(?:\s+(?:SYSTEM\s+("[^"]*"|'[^']*')|PUBLIC\s+("[^"]*"|'[^']*')\s*("[^"]*"|'[^']*')?))?\s*>/.exec(text.slice(0, 4096));
  if (!m) return input;
  // Also drops any declaration of encoding: the text is already decoded.
  return text.slice(0, m.index).replace(/^<\?xml[^>]*\?>/, '<?xml version="1.0"?>') + text.slice(m.index + m[0].length);
}

export interface ReadOptions {
  /** Largest document read (bytes); same as `budgets.maxBytes`. */
  maxBytes?: number;
  /** Budgets checked before parsing (defaults: DEFAULT_BUDGETS). */
  budgets?: Partial<DocumentBudgets>;
}

/**
 * Read a science metadata document, saying why when it cannot: `not-indexed` when it exceeds
 * a budget, `unreadable` when it is not a readable document of a supported format. `withText`:
 * also the document's plain text. Runs on the calling thread (see SciencePool for untrusted
 * documents on a server). Never throws.
 */
export function readScienceMetadataResult(formatId: string, xml: string | Uint8Array, options: ReadOptions & { withText?: boolean } = {}): ScienceRead<ScienceMetadata> {
  if (!isScienceMetadataFormat(formatId)) return { status: 'unreadable', reason: `format ${formatId} is not a science metadata format this node reads` };
  const budgets = { ...options.budgets, ...(options.maxBytes ? { maxBytes: options.maxBytes } : {}) };
  if (isSchemaOrgFormat(formatId)) return readSchemaOrgResult(formatId, xml, budgets, options.withText === true);
  const maxBytes = budgetsOf(budgets).maxBytes;
  const size = typeof xml === 'string' ? Buffer.byteLength(xml, 'utf8') : xml.byteLength;
  const doc = parseDocument(size > maxBytes ? xml : withoutExternalDoctype(xml, maxBytes), budgets, { collectText: options.withText === true });
  if (!doc.ok) return doc.budget ? { status: 'not-indexed', reason: doc.reason } : { status: 'unreadable', reason: doc.reason };
  try {
    const read = XML_READERS.find(([is]) => is(formatId))![1];
    const value = read(formatId, doc.root);
    return doc.text === undefined ? { status: 'read', value } : { status: 'read', value, text: doc.text };
  } catch (err) {
    return { status: 'unreadable', reason: `not readable: ${(err as Error)?.message ?? String(err)}`.slice(0, 200) };
  }
}

/**
 * Read the fields a landing page needs from a science metadata document. Undefined when the
 * format is not supported or the document is unreadable (not XML, DOCTYPE, over a budget); a
 * readable document missing fields gives a partial result. Never throws.
 */
export function readScienceMetadata(formatId: string, xml: string | Uint8Array, options: ReadOptions = {}): ScienceMetadata | undefined {
  const r = readScienceMetadataResult(formatId, xml, options);
  return r.status === 'read' ? r.value : undefined;
}
