import { parseLenient, DEFAULT_MAX_DOCUMENT_BYTES } from './xml.js';
import { isEmlFormat, readEml } from './eml.js';
import { isIsoFormat, readIso } from './iso.js';
import { isDataCiteFormat, readDataCite } from './datacite.js';
import { isDublinCoreFormat, readDublinCore } from './dublin-core.js';
import type { ScienceMetadata } from './types.js';

/** True for the science metadata formats this package reads (EML 2.x, ISO 19139, DataCite, Dublin Core). */
export function isScienceMetadataFormat(formatId: string): boolean {
  return isEmlFormat(formatId) || isIsoFormat(formatId) || isDataCiteFormat(formatId) || isDublinCoreFormat(formatId);
}

/**
 * Read the fields a landing page needs from a science metadata document. Undefined when the
 * format is not supported or the document is unreadable (not XML, DOCTYPE, too large); a
 * readable document missing fields gives a partial result. Never throws.
 */
export function readScienceMetadata(formatId: string, xml: string | Uint8Array, options: { maxBytes?: number } = {}): ScienceMetadata | undefined {
  if (!isScienceMetadataFormat(formatId)) return undefined;
  const doc = parseLenient(xml, options.maxBytes ?? DEFAULT_MAX_DOCUMENT_BYTES);
  if (!doc) return undefined;
  try {
    if (isEmlFormat(formatId)) return readEml(formatId, doc.root);
    if (isIsoFormat(formatId)) return readIso(formatId, doc.root);
    if (isDataCiteFormat(formatId)) return readDataCite(formatId, doc.root);
    return readDublinCore(formatId, doc.root);
  } catch {
    return undefined;
  }
}
