/** Hostile documents of the sizes a security test uploaded (issue #15), built in memory. */

const RDF_HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ore="http://www.openarchives.org/ore/terms/" xmlns:cito="http://purl.org/spar/cito/" xmlns:dcterms="http://purl.org/dc/terms/">';
const R = 'https://cn.dataone.org/cn/v2/resolve/';

/** A resource map whose aggregation holds `depth` nested descriptions, padded with text to about `bytes`. */
export function deepMap(depth: number, bytes: number): string {
  const pad = bytes > 0 ? 'x'.repeat(Math.max(0, Math.floor(bytes / depth) - 60)) : '';
  const open = `<rdf:Description><dcterms:title>${pad}</dcterms:title><ore:aggregates>`;
  return `${RDF_HEAD}<rdf:Description rdf:about="${R}map#aggregation"><rdf:type rdf:resource="http://www.openarchives.org/ore/terms/Aggregation"/><ore:aggregates>${open.repeat(depth)}${'</ore:aggregates></rdf:Description>'.repeat(depth)}</ore:aggregates></rdf:Description></rdf:RDF>`;
}

/**
 * A resource map of `n` data objects that one metadata document `cito:documents`, each also
 * saying it `cito:isDocumentedBy` it (URIs relative to the resolve base, as compact as a map gets).
 */
export function linkFloodMap(n: number): string {
  const parts: string[] = [RDF_HEAD, `<rdf:Description rdf:about="map#aggregation"><rdf:type rdf:resource="http://www.openarchives.org/ore/terms/Aggregation"/><ore:aggregates rdf:resource="meta"/>`];
  for (let i = 0; i < n; i++) parts.push(`<ore:aggregates rdf:resource="d${i}"/>`);
  parts.push('</rdf:Description><rdf:Description rdf:about="meta">');
  for (let i = 0; i < n; i++) parts.push(`<cito:documents rdf:resource="d${i}"/>`);
  parts.push('</rdf:Description>');
  for (let i = 0; i < n; i++) parts.push(`<rdf:Description rdf:about="d${i}"><cito:isDocumentedBy rdf:resource="meta"/></rdf:Description>`);
  parts.push(`<rdf:Description rdf:about="map"><ore:describes rdf:resource="map#aggregation"/></rdf:Description></rdf:RDF>`);
  return parts.join('');
}

const EML_HEAD = '<?xml version="1.0" encoding="UTF-8"?><eml:eml xmlns:eml="https://eml.ecoinformatics.org/eml-2.2.0" packageId="p" system="s"><dataset><title>Hostile</title>';

/** An EML with `n` keywords, every one different except the last two (repeats of the first). */
export function keywordFloodEml(n: number): string {
  const parts: string[] = [EML_HEAD, '<keywordSet>'];
  for (let i = 0; i < n; i++) parts.push(`<keyword>kw${i}</keyword>`);
  parts.push('<keyword>kw0</keyword><keyword>kw1</keyword></keywordSet></dataset></eml:eml>');
  return parts.join('');
}

/** An EML whose abstract is a CDATA section holding `n` unclosed `<!--` (4 bytes each). */
export function commentFloodEml(n: number): string {
  return `${EML_HEAD}<abstract><para><![CDATA[start ${'<!--'.repeat(n)} end]]></para></abstract></dataset></eml:eml>`;
}
