import { formatById } from '@memberkit/types';
import { isScienceMetadataFormat } from '@memberkit/science';
import type { Theme } from '../theme.js';

/**
 * The raw science metadata document: the object itself when it is one, else the document
 * describing it in its package; with neither (or a document the caller may not read), the
 * object's system metadata.
 *
 * Always served as `text/plain; charset=utf-8`, never with the media type the uploader named
 * (nor as XML): a browser shows the bytes as text, so markup in an uploaded document (an
 * XHTML-namespaced script in an EML, a "metadata" document declared text/html) cannot run on
 * the node's origin. Clients that want the document as XML use MNRead.get.
 */
export const metadataTheme: Theme = {
  name: 'metadata',
  description: 'The science metadata document as stored (EML, ISO 19139, DataCite...) shown as plain text, or the system metadata when there is none',
  mediaType: 'text/plain; charset=utf-8',
  async render(ctx) {
    let doc = formatById(ctx.record.sysmeta.formatId)?.formatType === 'METADATA' || isScienceMetadataFormat(ctx.record.sysmeta.formatId) ? ctx.record : undefined;
    if (!doc) doc = (await ctx.page()).metadataRecord;
    if (!doc) return { body: ctx.systemMetadataXml(ctx.record) };
    return { body: await ctx.bytes(doc) };
  },
};
