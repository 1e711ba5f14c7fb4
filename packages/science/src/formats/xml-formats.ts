/**
 * XML documents: which standard, by root element, namespace, schema location, version and
 * DOCTYPE. Every METADATA and RESOURCE format of the federation's list that these tell apart
 * has a rule here; the rest of XML is text/xml.
 */
import { firstElementText, readXmlHead, rootAttribute, type XmlHead } from './xml-head.js';
import type { ContentMatch } from './content-match.js';

const RDF_NS = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#';
const ORE_NS = 'http://www.openarchives.org/ore/terms/';
export const ORE_FORMAT_ID = 'http://www.openarchives.org/ore/terms';
export const GENERIC_XML = 'text/xml';

/** Root namespace → formatId, for standards whose namespace alone says which one. */
const BY_NAMESPACE: ReadonlyMap<string, string> = new Map([
  ['http://ns.dataone.org/metadata/schema/onedcx/v1.0', 'http://ns.dataone.org/metadata/schema/onedcx/v1.0'],
  ['http://www.openarchives.org/OAI/2.0/oai_dc/', 'http://www.openarchives.org/OAI/2.0/oai_dc/'],
  ['http://purl.org/dryad/schema/terms/v3.1', 'http://datadryad.org/profile/v3.1'],
  ['http://purl.org/dryad/terms/', 'http://purl.org/dryad/terms/'],
  ['http://purl.org/ornl/schema/mercury/terms/v1.0', 'http://purl.org/ornl/schema/mercury/terms/v1.0'],
  ['ddi:codebook:2_5', 'ddi:codebook:2_5'],
  ['http://www.icpsr.umich.edu/DDI', 'http://www.icpsr.umich.edu/DDI'],
  ['http://www.unidata.ucar.edu/namespaces/netcdf/ncml-2.2', 'http://www.unidata.ucar.edu/namespaces/netcdf/ncml-2.2'],
  ['http://www.loc.gov/METS/', 'http://www.loc.gov/METS/'],
  ['http://rs.tdwg.org/dwc/xsd/simpledarwincore/', 'http://rs.tdwg.org/dwc/xsd/simpledarwincore/'],
  ['https://purl.dataone.org/collections-1.0.0', 'https://purl.dataone.org/collections-1.0.0'],
  ['https://purl.dataone.org/collections-1.1.0', 'https://purl.dataone.org/collections-1.1.0'],
  ['https://purl.dataone.org/portals-1.0.0', 'https://purl.dataone.org/portals-1.0.0'],
  ['https://purl.dataone.org/portals-1.1.0', 'https://purl.dataone.org/portals-1.1.0'],
  // Data in XML.
  ['http://www.cuahsi.org/waterML/1.0/', 'http://www.cuahsi.org/waterML/1.0/'],
  ['http://www.cuahsi.org/waterML/1.1/', 'http://www.cuahsi.org/waterML/1.1/'],
  ['http://www.w3.org/2005/Atom', 'http://www.w3.org/2005/Atom'],
  ['http://www.nexml.org/2009', 'http://www.nexml.org/2009'],
  ['http://www.opengis.net/kml/2.2', 'application/vnd.google-earth.kml+xml'],
  ['http://earth.google.com/kml/2.0', 'application/vnd.google-earth.kml+xml'],
  ['http://earth.google.com/kml/2.1', 'application/vnd.google-earth.kml+xml'],
  ['http://earth.google.com/kml/2.2', 'application/vnd.google-earth.kml+xml'],
  ['http://www.topografix.com/GPX/1/0', 'application/gpx+xml'],
  ['http://www.topografix.com/GPX/1/1', 'application/gpx+xml'],
  ['http://www.w3.org/2000/svg', 'image/svg+xml'],
]);

const DARWIN2_NS = 'http://digir.net/schema/conceptual/darwin/2003/1.0';
const DATAONE_TYPES = /^https?:\/\/ns\.dataone\.org\/service\/types\/v\d+(\.\d+)?$/;

/** What an XML head says; undefined when `text` is not XML. */
export function matchXml(text: string): ContentMatch | undefined {
  const head = readXmlHead(text);
  if (!head) return undefined;
  return matchHead(head, text) ?? { formatId: GENERIC_XML, exact: false, mediaType: 'text/xml', reason: `XML with root ${describeRoot(head)}` };
}

function matchHead(head: XmlHead, text: string): ContentMatch | undefined {
  const { local, namespace: ns } = head;
  const exact = (formatId: string, reason: string, mediaType = 'text/xml'): ContentMatch => ({ formatId, exact: true, mediaType, reason });

  // A DOCTYPE naming a format of the list (EML 2.0.0 beta modules, the ESRI profile DTD).
  const doctypeId = head.doctype?.publicId ?? '';
  if (/^-\/\/ecoinformatics\.org\/\/eml-[a-z]+-2\.0\.0beta\d\/\/EN$/.test(doctypeId)) return exact(doctypeId, `EML beta DOCTYPE ${doctypeId}`);
  if (/esriprof80\.dtd$/i.test(head.doctype?.systemId ?? '')) return exact('http://www.esri.com/metadata/esriprof80.dtd', 'ESRI profile DOCTYPE');

  if (local === 'eml') {
    const m = /^(eml:\/\/ecoinformatics\.org|https:\/\/eml\.ecoinformatics\.org)\/eml-(\d+\.\d+\.\d+)$/.exec(ns);
    if (m) return exact(`${m[1]}/eml-${m[2]}`, `EML root in ${ns}`);
  }
  if ((local === 'MD_Metadata' && ns === 'http://www.isotc211.org/2005/gmd') || (local === 'MI_Metadata' && ns === 'http://www.isotc211.org/2005/gmi')) {
    return exact(isoVariant(head, text), `ISO 19139 ${head.prefix ? `${head.prefix}:` : ''}${local}`);
  }
  if (local === 'metadata' && ns === '') {
    const fgdc = fgdcVariant(head, text);
    if (fgdc) return exact(fgdc, 'FGDC CSDGM metadata');
  }
  if (local === 'resource') {
    const m = /^https?:\/\/datacite\.org\/schema\/kernel-(\d+(?:\.\d+)?)$/.exec(ns);
    if (m) return exact(dataciteVersion(m[1]!, rootAttribute(head, 'schemaLocation') ?? ''), `DataCite resource in ${ns}`);
  }
  if (local === 'RDF' && ns === RDF_NS) {
    const ore = [...head.namespaces.values()].some((u) => u === ORE_NS || u === ORE_FORMAT_ID) || text.includes(ORE_NS);
    return ore ? exact(ORE_FORMAT_ID, 'RDF/XML using the OAI-ORE vocabulary', 'application/rdf+xml') : exact('application/rdf+xml', 'RDF/XML', 'application/rdf+xml');
  }
  if (DATAONE_TYPES.test(ns)) {
    // DataONE service documents (system metadata, format lists) are records about objects,
    // not science metadata: published as XML data so that no one indexes them as datasets
    // (the list's "...#SystemMetadata" METADATA format remains available by override).
    return { formatId: GENERIC_XML, exact: true, mediaType: 'text/xml', reason: `DataONE ${local} document (published as XML data)` };
  }
  if (local === 'codeBook' && ns === '') {
    const version = rootAttribute(head, 'version') ?? '';
    if (version.startsWith('2.5')) return exact('ddi:codebook:2_5', 'DDI codeBook version 2.5');
    if (version.startsWith('2.1')) return exact('http://www.icpsr.umich.edu/DDI', 'DDI codeBook version 2.1');
  }
  const byNs = BY_NAMESPACE.get(ns);
  if (byNs) return exact(byNs, `root ${local} in ${ns}`, byNs.includes('+xml') ? byNs : mediaTypeOf(byNs));
  if ([...head.namespaces.values()].some((u) => u.replace(/\/$/, '') === DARWIN2_NS) || /darwin2\.xsd/.test(rootAttribute(head, 'schemaLocation') ?? '')) {
    return exact(`${DARWIN2_NS}/darwin2.xsd`, 'Darwin Core 2 namespace');
  }
  if (local.toLowerCase() === 'html') return exact('text/html', 'HTML document', 'text/html');
  return undefined;
}

function mediaTypeOf(formatId: string): string {
  if (formatId === 'http://www.w3.org/2005/Atom') return 'application/atom+xml';
  if (formatId.startsWith('http://www.unidata.ucar.edu/namespaces/netcdf/ncml')) return 'application/ncML+xml';
  return 'text/xml';
}

/**
 * The list names three ISO 19139 variants beside the plain one and the North American
 * Profile; their documents say which by where their schema lives, their fileIdentifier and
 * their metadataStandardName.
 */
function isoVariant(head: XmlHead, text: string): string {
  const namespaces = [...head.namespaces.values()];
  const schemaLocation = rootAttribute(head, 'schemaLocation') ?? '';
  const from = head.bodyStart;
  const standard = firstElementText(text, 'metadataStandardName', from) ?? '';
  if (namespaces.some((u) => /\/napm$/.test(u)) || /north american profile/i.test(standard)) return 'INCITS-453-2009';
  const fileIdentifier = firstElementText(text, 'fileIdentifier', from) ?? '';
  if (/noaa\.gov\//i.test(schemaLocation) || /^gov\.noaa\./i.test(fileIdentifier) || /noaa/i.test(standard)) return 'http://www.isotc211.org/2005/gmd-noaa';
  if (/pangaea/i.test(fileIdentifier) || /pangaea\.de/i.test(schemaLocation)) return 'http://www.isotc211.org/2005/gmd-pangaea';
  return 'http://www.isotc211.org/2005/gmd';
}

/**
 * FGDC CSDGM (a `metadata` root without namespace): the profile from the ESRI elements,
 * metstdn/metstdv, the schema location or profile-only elements (BDP's taxonomy).
 * Undefined when the document shows no FGDC section at all.
 */
function fgdcVariant(head: XmlHead, text: string): string | undefined {
  const from = head.bodyStart;
  const location = `${rootAttribute(head, 'noNamespaceSchemaLocation') ?? ''} ${head.doctype?.systemId ?? ''}`.toLowerCase();
  const standard = `${firstElementText(text, 'metstdn', from) ?? ''} ${firstElementText(text, 'metstdv', from) ?? ''}`.toLowerCase();
  const hasFgdc = text.includes('<idinfo', from) || text.includes('<metainfo', from) || location.includes('fgdc') || standard.includes('fgdc');
  if (text.includes('<Esri>', from) || text.includes('<Esri ', from) || standard.includes('esri')) return 'http://www.esri.com/metadata/esriprof80.dtd';
  if (!hasFgdc) return undefined;
  if (standard.includes('001.1-1999') || standard.includes('biological data profile') || location.includes('001.1') || location.includes('bdp') || text.includes('<taxonomy>', from)) return 'FGDC-STD-001.1-1999';
  if (standard.includes('001.2-1999') || standard.includes('shoreline') || location.includes('001.2')) return 'FGDC-STD-001.2-1999';
  return 'FGDC-STD-001-1998';
}

/**
 * DataCite 3.0 and 3.1 share the kernel-3 namespace; a document names 3.0 only through its
 * schema location, and a 3.0 document is valid 3.1, so kernel-3 reads as 3.1 otherwise.
 * Other kernels (2.x, 4) give their own identifier, which is not in the list.
 */
function dataciteVersion(kernel: string, schemaLocation: string): string {
  if (kernel === '3' || kernel.startsWith('3.')) {
    return /kernel-3\.0\b/.test(schemaLocation) || kernel === '3.0' ? 'http://datacite.org/schema/kernel-3.0' : 'http://datacite.org/schema/kernel-3.1';
  }
  return `http://datacite.org/schema/kernel-${kernel}`;
}

function describeRoot(head: XmlHead): string {
  return `${head.prefix ? `${head.prefix}:` : ''}${head.local}${head.namespace ? ` in ${head.namespace}` : ''}`;
}
