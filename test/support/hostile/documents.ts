// Hostile science metadata and resource maps, generated in code (issue #15). Every script
// payload sets `window.__pwned`, logs PWNED_MARK and opens a dialog, so a page that runs any
// of them is caught by whichever signal survives (test/support/hostile/chromium-check.ts).

export const EML_FORMAT = 'https://eml.ecoinformatics.org/eml-2.2.0';
export const ORE_FORMAT = 'http://www.openarchives.org/ore/terms';
export const DATACITE_FORMAT = 'http://datacite.org/schema/kernel-3.1';
export const ISO_FORMAT = 'http://www.isotc211.org/2005/gmd';

/** What a payload logs when it runs. */
export const PWNED_MARK = '__pwned__';
const JS = `window.__pwned=1;console.log('${PWNED_MARK}');alert(1)`;

/** Script payloads as they would be typed into a metadata editor (escaped for XML by xmlEscape). */
export const SCRIPT_PAYLOADS = [
  `<script>${JS}</script>`,
  `"><img src=x onerror="${JS}">`,
  `'><svg onload="${JS}">`,
  `</script><script>${JS}</script>`,
  `</title><script>${JS}</script>`,
  `javascript:${JS}`,
];

/** `javascript:` URLs in the spellings browsers accept (case, leading space, entity-hidden tab). */
export const JAVASCRIPT_URLS = [`javascript:${JS}`, ` JavaScript:${JS}`, `java&#9;script:${JS}`];

export function xmlEscape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** All payloads in one string: what goes into every text field. */
export function payloadText(label: string): string {
  return `${label} ${SCRIPT_PAYLOADS.join(' ')}`;
}

/** Script as markup in the metadata bytes themselves: runs if the bytes are shown as XML or HTML. */
export const MARKUP_PAYLOADS =
  `<h:script xmlns:h="http://www.w3.org/1999/xhtml">${JS}</h:script>` +
  `<h:img xmlns:h="http://www.w3.org/1999/xhtml" src="x" onerror="${JS}"/>` +
  `<svg xmlns="http://www.w3.org/2000/svg" onload="${JS}"><script>${JS}</script></svg>`;

interface EmlParts {
  title?: string;
  creators?: string;
  abstract?: string;
  keywords?: string;
  rights?: string;
  extra?: string;
  /** Markup placed inside <dataset> after the title (unescaped). */
  raw?: string;
}

/** An EML 2.2 document; the parts are raw XML (callers escape what must be text). */
export function eml(packageId: string, p: EmlParts = {}): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<eml:eml xmlns:eml="${EML_FORMAT}" packageId="${xmlEscape(packageId)}" system="hostile">
  <dataset>
    <title>${p.title ?? 'Untitled'}</title>${p.raw ?? ''}
    ${p.creators ?? '<creator><individualName><surName>Nobody</surName></individualName></creator>'}
    <pubDate>2024-01-01</pubDate>
    <abstract>${p.abstract ?? '<para>none</para>'}</abstract>
    ${p.keywords ? `<keywordSet>${p.keywords}</keywordSet>` : ''}
    ${p.rights ?? ''}
    ${p.extra ?? ''}
  </dataset>
</eml:eml>
`;
}

/** A plain EML with a title and one creator, for ordinary packages. */
export function plainEml(packageId: string, title: string, creator: string): string {
  return eml(packageId, { title: xmlEscape(title), creators: `<creator><individualName><surName>${xmlEscape(creator)}</surName></individualName></creator>` });
}

/** Script payloads (escaped as text) in every field the landing page and JSON-LD show, plus script markup in the bytes. */
export function scriptEverywhereEml(packageId: string): string {
  const t = (label: string): string => xmlEscape(payloadText(label));
  return eml(packageId, {
    title: t('title'),
    raw: MARKUP_PAYLOADS,
    creators: `<creator><individualName><givenName>${t('given')}</givenName><surName>${t('sur')}</surName></individualName>
      <organizationName>${t('org')}</organizationName><electronicMailAddress>${t('mail')}</electronicMailAddress>
      <userId directory="https://orcid.org">${t('orcid')}</userId></creator>`,
    abstract: `<para>${t('abstract')}</para><para><![CDATA[${payloadText('cdata')}]]></para>`,
    keywords: SCRIPT_PAYLOADS.map((k) => `<keyword>${xmlEscape(k)}</keyword>`).join(''),
    rights: `<licensed><licenseName>${t('license')}</licenseName><url>${xmlEscape(JAVASCRIPT_URLS[0]!)}</url><identifier>${t('licid')}</identifier></licensed>`,
    extra: `<coverage><geographicCoverage><geographicDescription>${t('place')}</geographicDescription><boundingCoordinates>
      <westBoundingCoordinate>-10</westBoundingCoordinate><eastBoundingCoordinate>10</eastBoundingCoordinate>
      <northBoundingCoordinate>10</northBoundingCoordinate><southBoundingCoordinate>-10</southBoundingCoordinate></boundingCoordinates></geographicCoverage>
      <temporalCoverage><rangeOfDates><beginDate><calendarDate>${t('begin')}</calendarDate></beginDate><endDate><calendarDate>2020</calendarDate></endDate></rangeOfDates></temporalCoverage></coverage>
      <publisher><organizationName>${t('publisher')}</organizationName></publisher>`,
  });
}

/** EML whose license URL is `url` (in `licensed/url`). */
export function emlLicensedUrl(packageId: string, url: string): string {
  return eml(packageId, { title: 'Licensed URL', rights: `<licensed><licenseName>Some license</licenseName><url>${url}</url></licensed>` });
}

/** EML 2.1-style rights with `ulink@url`. */
export function emlUlink(packageId: string, url: string): string {
  return eml(packageId, { title: 'Ulink rights', rights: `<intellectualRights><para>See <ulink url="${url}"><citetitle>the license</citetitle></ulink>.</para></intellectualRights>` });
}

export function dataciteRights(id: string, url: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<resource xmlns="http://datacite.org/schema/kernel-3">
  <identifier identifierType="DOI">10.5555/${xmlEscape(id)}</identifier>
  <creators><creator><creatorName>Doe, Jane</creatorName></creator></creators>
  <titles><title>DataCite rights URI</title></titles>
  <publisher>Hostile</publisher><publicationYear>2024</publicationYear>
  <rightsList><rights rightsURI="${url}">Some rights</rights></rightsList>
</resource>
`;
}

export function isoAnchor(id: string, url: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<gmd:MD_Metadata xmlns:gmd="http://www.isotc211.org/2005/gmd" xmlns:gco="http://www.isotc211.org/2005/gco" xmlns:gmx="http://www.isotc211.org/2005/gmx" xmlns:xlink="http://www.w3.org/1999/xlink">
  <gmd:fileIdentifier><gco:CharacterString>${xmlEscape(id)}</gco:CharacterString></gmd:fileIdentifier>
  <gmd:identificationInfo><gmd:MD_DataIdentification>
    <gmd:citation><gmd:CI_Citation><gmd:title><gco:CharacterString>ISO anchor</gco:CharacterString></gmd:title></gmd:CI_Citation></gmd:citation>
    <gmd:abstract><gco:CharacterString>x</gco:CharacterString></gmd:abstract>
    <gmd:resourceConstraints><gmd:MD_LegalConstraints>
      <gmd:otherConstraints><gmx:Anchor xlink:href="${url}">Click for the license</gmx:Anchor></gmd:otherConstraints>
    </gmd:MD_LegalConstraints></gmd:resourceConstraints>
  </gmd:MD_DataIdentification></gmd:identificationInfo>
</gmd:MD_Metadata>
`;
}

/** 200,000 `<!--` inside a CDATA section of the abstract (~800 KB): a quadratic comment-stripping regex stalls on it. */
export function commentFloodEml(packageId: string, count = 200_000): string {
  return eml(packageId, { title: 'Comment flood', abstract: `<para><![CDATA[${'<!--'.repeat(count)}]]></para>` });
}

/** `count` distinct keywords (120,000: ~3 MB): deduplication with Array.includes is quadratic. */
export function keywordFloodEml(packageId: string, count = 120_000): string {
  const parts: string[] = [];
  for (let i = 0; i < count; i++) parts.push(`<keyword>kw-${i.toString(36)}-flood</keyword>`);
  return eml(packageId, { title: 'Keyword flood', keywords: parts.join('') });
}

/** An EML of about `bytes` bytes of abstract paragraphs (15 MB took 16 s and 1.1 GB). */
export function largeEml(packageId: string, bytes = 15 * 1024 * 1024): string {
  const para = `<para>${'Large document paragraph with ordinary words about soil moisture and tundra. '.repeat(13)}</para>\n`;
  return eml(packageId, { title: 'Large document', abstract: para.repeat(Math.ceil(bytes / para.length)) });
}

/** An EML nested `depth` elements deep inside its abstract. */
export function deepEml(packageId: string, depth = 32_000): string {
  return eml(packageId, { title: 'Deep document', abstract: `<para>${'<section>'.repeat(depth)}x${'</section>'.repeat(depth)}</para>` });
}

/** `https://cn.dataone.org/cn/v2/resolve/{pid}`: how DataONE maps name objects. */
export function resolveUri(pid: string): string {
  return `https://cn.dataone.org/cn/v2/resolve/${encodeURIComponent(pid)}`;
}

const RDF_HEAD = `<?xml version="1.0" encoding="UTF-8"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ore="http://www.openarchives.org/ore/terms/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:cito="http://purl.org/spar/cito/" xmlns:ex="http://example.org/x#">`;

function mapHead(mapPid: string): string {
  const m = xmlEscape(resolveUri(mapPid));
  return `${RDF_HEAD}
  <rdf:Description rdf:about="${m}">
    <rdf:type rdf:resource="http://www.openarchives.org/ore/terms/ResourceMap"/>
    <dcterms:identifier>${xmlEscape(mapPid)}</dcterms:identifier>
    <ore:describes rdf:resource="${m}#aggregation"/>
  </rdf:Description>`;
}

/** A resource map aggregating `metadataPid` and `dataPids`, the metadata documenting the data. */
export function resourceMap(mapPid: string, metadataPid: string, dataPids: string[]): string {
  const agg = `${xmlEscape(resolveUri(mapPid))}#aggregation`;
  const md = xmlEscape(resolveUri(metadataPid));
  return `${mapHead(mapPid)}
  <rdf:Description rdf:about="${agg}">
    <rdf:type rdf:resource="http://www.openarchives.org/ore/terms/Aggregation"/>
    <ore:aggregates rdf:resource="${md}"/>
${dataPids.map((d) => `    <ore:aggregates rdf:resource="${xmlEscape(resolveUri(d))}"/>`).join('\n')}
  </rdf:Description>
  <rdf:Description rdf:about="${md}">
    <dcterms:identifier>${xmlEscape(metadataPid)}</dcterms:identifier>
${dataPids.map((d) => `    <cito:documents rdf:resource="${xmlEscape(resolveUri(d))}"/>`).join('\n')}
  </rdf:Description>
${dataPids.map((d) => `  <rdf:Description rdf:about="${xmlEscape(resolveUri(d))}"><dcterms:identifier>${xmlEscape(d)}</dcterms:identifier><cito:isDocumentedBy rdf:resource="${md}"/></rdf:Description>`).join('\n')}
</rdf:RDF>
`;
}

/**
 * A map whose aggregation is followed by `depth` levels of nested striped RDF
 * (`<ex:n><rdf:Description>` per two levels): 32,000 levels is ~1.9 MB, the issue's map.
 */
export function deepMap(mapPid: string, memberPid: string, depth = 32_000): string {
  const agg = `${xmlEscape(resolveUri(mapPid))}#aggregation`;
  const pairs = Math.floor(depth / 2);
  return `${mapHead(mapPid)}
  <rdf:Description rdf:about="${agg}">
    <rdf:type rdf:resource="http://www.openarchives.org/ore/terms/Aggregation"/>
    <ore:aggregates rdf:resource="${xmlEscape(resolveUri(memberPid))}"/>
    <ex:n><rdf:Description>${'<ex:n><rdf:Description>'.repeat(pairs)}<ex:leaf>x</ex:leaf>${'</rdf:Description></ex:n>'.repeat(pairs)}</rdf:Description></ex:n>
  </rdf:Description>
</rdf:RDF>
`;
}

/** A map with `depth` bare `<a>` elements nested in its aggregation (40,000: 280 KB, froze the node 13.5 s). */
export function deepBareMap(mapPid: string, memberPid: string, depth = 40_000): string {
  const agg = `${xmlEscape(resolveUri(mapPid))}#aggregation`;
  return `${mapHead(mapPid)}
  <rdf:Description rdf:about="${agg}">
    <rdf:type rdf:resource="http://www.openarchives.org/ore/terms/Aggregation"/>
    <ore:aggregates rdf:resource="${xmlEscape(resolveUri(memberPid))}"/>
    <ex:n rdf:parseType="Literal">${'<a>'.repeat(depth)}${'</a>'.repeat(depth)}</ex:n>
  </rdf:Description>
</rdf:RDF>
`;
}

/**
 * A map aggregating `memberPid` and `links` other objects (that need not exist), its metadata
 * `cito:documents` all of them: 60,000 links froze anonymous views 40–97 s.
 */
export function wideMap(mapPid: string, metadataPid: string, memberPid: string, links = 60_000): string {
  const agg = `${xmlEscape(resolveUri(mapPid))}#aggregation`;
  const md = xmlEscape(resolveUri(metadataPid));
  const ids = [memberPid, ...Array.from({ length: links - 1 }, (_, i) => `${mapPid}-member-${i}`)].map((p) => xmlEscape(resolveUri(p)));
  return `${mapHead(mapPid)}
  <rdf:Description rdf:about="${agg}">
    <rdf:type rdf:resource="http://www.openarchives.org/ore/terms/Aggregation"/>
    <ore:aggregates rdf:resource="${md}"/>
${ids.map((u) => `<ore:aggregates rdf:resource="${u}"/>`).join('\n')}
  </rdf:Description>
  <rdf:Description rdf:about="${md}">
${ids.map((u) => `<cito:documents rdf:resource="${u}"/>`).join('\n')}
  </rdf:Description>
</rdf:RDF>
`;
}
