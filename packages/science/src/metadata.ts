import { parseDocument } from './xml.js';
import type { DocumentBudgets } from './budgets.js';
import { isEmlFormat, readEml } from './eml.js';
import { isIsoFormat, readIso } from './iso.js';
import { isDataCiteFormat, readDataCite } from './datacite.js';
import { isDublinCoreFormat, readDublinCore } from './dublin-core.js';
import type { ScienceMetadata, ScienceRead } from './types.js';

/** True for the science metadata formats this package reads (EML 2.x, ISO 19139, DataCite, Dublin Core). */
export function isScienceMetadataFormat(formatId: string): boolean {
  return isEmlFormat(formatId) || isIsoFormat(formatId) || isDataCiteFormat(formatId) || isDublinCoreFormat(formatId);
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
  const doc = parseDocument(xml, budgets, { collectText: options.withText === true });
  if (!doc.ok) return doc.budget ? { status: 'not-indexed', reason: doc.reason } : { status: 'unreadable', reason: doc.reason };
  try {
    const value = isEmlFormat(formatId)
      ? readEml(formatId, doc.root)
      : isIsoFormat(formatId)
        ? readIso(formatId, doc.root)
        : isDataCiteFormat(formatId)
          ? readDataCite(formatId, doc.root)
          : readDublinCore(formatId, doc.root);
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
