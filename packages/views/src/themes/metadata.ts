import { formatById } from '@memberkit/types';
import { isScienceMetadataFormat } from '@memberkit/science';
import type { Theme } from '../theme.js';

/**
 * The raw science metadata document: the object itself when it is one, else the document
 * describing it in its package; with neither (or a document the caller may not read), the
 * object's system metadata.
 */
export const metadataTheme: Theme = {
  name: 'metadata',
  description: 'The science metadata document as stored (EML, ISO 19139, DataCite...), or the system metadata when there is none',
  mediaType: 'text/xml',
  async render(ctx) {
    let doc = formatById(ctx.record.sysmeta.formatId)?.formatType === 'METADATA' || isScienceMetadataFormat(ctx.record.sysmeta.formatId) ? ctx.record : undefined;
    if (!doc) doc = (await ctx.page()).metadataRecord;
    if (!doc) return { body: ctx.systemMetadataXml(ctx.record), mediaType: 'text/xml; charset=utf-8' };
    const mediaType = doc.sysmeta.mediaType?.name ?? formatById(doc.sysmeta.formatId)?.mediaType ?? 'text/xml';
    return { body: await ctx.bytes(doc), mediaType };
  },
};
