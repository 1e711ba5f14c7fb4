// Formats by content: our own documents for each standard (written from the standards'
// documentation), each identified from its first bytes the way the wrap scanners read them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allFormats, formatById } from '@memberkit/types';
import { detectFormat, FormatRules, FormatRulesError, formatRulesProblems, HEAD_BYTES, identifyFormat } from '@memberkit/science';
import { netcdfClassicFile } from './netcdf-header.js';

const FIXTURES = join(import.meta.dirname, 'fixtures');
const head = (bytes: Uint8Array) => bytes.subarray(0, HEAD_BYTES);
const file = (name: string) => new Uint8Array(readFileSync(join(FIXTURES, name)));
const idOf = (name: string, bytes: Uint8Array = file(name), mediaType?: string) =>
  identifyFormat({ name, head: head(bytes), size: bytes.length, ...(mediaType ? { mediaType } : {}) });
const text = (s: string) => new TextEncoder().encode(s);

describe('identifyFormat: metadata and resource maps by content', () => {
  it.each([
    ['eml-2.0.1.xml', 'eml://ecoinformatics.org/eml-2.0.1'],
    ['eml-2.1.1.xml', 'eml://ecoinformatics.org/eml-2.1.1'],
    ['eml-2.2.0.xml', 'https://eml.ecoinformatics.org/eml-2.2.0'],
    ['Blandy.76.2', 'eml://ecoinformatics.org/eml-2.1.0'],
    ['iso19139-gmd.xml', 'http://www.isotc211.org/2005/gmd'],
    ['iso19139-gmi-noaa.xml', 'http://www.isotc211.org/2005/gmd-noaa'],
    ['iso19139-pangaea.xml', 'http://www.isotc211.org/2005/gmd-pangaea'],
    ['fgdc.xml', 'FGDC-STD-001-1998'],
    ['fgdc-bdp.xml', 'FGDC-STD-001.1-1999'],
    ['esri-profile.xml', 'http://www.esri.com/metadata/esriprof80.dtd'],
    ['datacite-3.1.xml', 'http://datacite.org/schema/kernel-3.1'],
    ['oai_dc.xml', 'http://www.openarchives.org/OAI/2.0/oai_dc/'],
    ['onedcx.xml', 'http://ns.dataone.org/metadata/schema/onedcx/v1.0'],
    ['dataset.jsonld', 'science-on-schema.org/Dataset;ld+json'],
    ['resource-map.rdf', 'http://www.openarchives.org/ore/terms'],
  ])('%s → %s', (name, formatId) => {
    expect(idOf(name)).toBe(formatId);
    // The same bytes under a name that says nothing (or says .xml) give the same answer.
    expect(idOf('object-without-extension', file(name))).toBe(formatId);
    expect(idOf('renamed.xml', file(name))).toBe(formatId);
  });

  it('tells the other listed XML standards apart by root, namespace and version', () => {
    const cases: Array<[string, string]> = [
      ['<DryadDataPackage xmlns="http://purl.org/dryad/schema/terms/v3.1"/>', 'http://datadryad.org/profile/v3.1'],
      ['<DryadDataFile xmlns="http://purl.org/dryad/terms/"/>', 'http://purl.org/dryad/terms/'],
      ['<metadata xmlns="http://purl.org/ornl/schema/mercury/terms/v1.0"><title>x</title></metadata>', 'http://purl.org/ornl/schema/mercury/terms/v1.0'],
      ['<codeBook xmlns="ddi:codebook:2_5" version="2.5"/>', 'ddi:codebook:2_5'],
      ['<codeBook version="2.5"/>', 'ddi:codebook:2_5'],
      ['<codeBook xmlns="http://www.icpsr.umich.edu/DDI" version="2.1"/>', 'http://www.icpsr.umich.edu/DDI'],
      ['<netcdf xmlns="http://www.unidata.ucar.edu/namespaces/netcdf/ncml-2.2" location="x.nc"/>', 'http://www.unidata.ucar.edu/namespaces/netcdf/ncml-2.2'],
      ['<mets:mets xmlns:mets="http://www.loc.gov/METS/"/>', 'http://www.loc.gov/METS/'],
      ['<sdwc:SimpleDarwinRecordSet xmlns:sdwc="http://rs.tdwg.org/dwc/xsd/simpledarwincore/"/>', 'http://rs.tdwg.org/dwc/xsd/simpledarwincore/'],
      ['<por:portal xmlns:por="https://purl.dataone.org/portals-1.0.0"/>', 'https://purl.dataone.org/portals-1.0.0'],
      ['<col:collection xmlns:col="https://purl.dataone.org/collections-1.1.0"/>', 'https://purl.dataone.org/collections-1.1.0'],
      ['<!DOCTYPE dataset PUBLIC "-//ecoinformatics.org//eml-dataset-2.0.0beta6//EN" "eml-dataset.dtd"><dataset/>', '-//ecoinformatics.org//eml-dataset-2.0.0beta6//EN'],
      ['<record xmlns:darwin="http://digir.net/schema/conceptual/darwin/2003/1.0"/>', 'http://digir.net/schema/conceptual/darwin/2003/1.0/darwin2.xsd'],
      ['<gmd:MD_Metadata xmlns:gmd="http://www.isotc211.org/2005/gmd" xmlns:gco="http://www.isotc211.org/2005/gco"><gmd:metadataStandardName><gco:CharacterString>North American Profile of ISO 19115:2003</gco:CharacterString></gmd:metadataStandardName></gmd:MD_Metadata>', 'INCITS-453-2009'],
      ['<resource xmlns="http://datacite.org/schema/kernel-3" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://datacite.org/schema/kernel-3 http://schema.datacite.org/meta/kernel-3.0/metadata.xsd"/>', 'http://datacite.org/schema/kernel-3.0'],
      ['<timeSeriesResponse xmlns="http://www.cuahsi.org/waterML/1.1/"/>', 'http://www.cuahsi.org/waterML/1.1/'],
      ['<kml xmlns="http://www.opengis.net/kml/2.2"/>', 'application/vnd.google-earth.kml+xml'],
    ];
    for (const [doc, formatId] of cases) expect(idOf('doc.xml', text(`<?xml version="1.0"?>\n${doc}`)), doc).toBe(formatId);
  });

  it('reads UTF-16 (with or without a byte order mark) and UTF-8 with a BOM', () => {
    const doc = '<?xml version="1.0" encoding="UTF-16"?><eml:eml xmlns:eml="eml://ecoinformatics.org/eml-2.1.1"/>';
    const le = Buffer.from(doc, 'utf16le');
    const be = Buffer.from(le).swap16();
    expect(idOf('a', Uint8Array.from([0xff, 0xfe, ...le]))).toBe('eml://ecoinformatics.org/eml-2.1.1');
    expect(idOf('a', Uint8Array.from([0xfe, 0xff, ...be]))).toBe('eml://ecoinformatics.org/eml-2.1.1');
    expect(idOf('a', Uint8Array.from(le))).toBe('eml://ecoinformatics.org/eml-2.1.1');
    expect(idOf('a', Uint8Array.from([0xef, 0xbb, 0xbf, ...text(doc)]))).toBe('eml://ecoinformatics.org/eml-2.1.1');
  });

  it('finds the root after a long prolog cut by the head, and reads a root start tag cut by it', () => {
    const comment = `<!-- ${'x'.repeat(3000)} -->`;
    const doc = `<?xml version="1.0"?>${comment}<!DOCTYPE eml [ <!ENTITY a "]>"> ]><eml:eml xmlns:eml="eml://ecoinformatics.org/eml-2.0.0" a="${'y'.repeat(9000)}"/>`;
    expect(idOf('a.xml', text(doc))).toBe('eml://ecoinformatics.org/eml-2.0.0');
  });
});

describe('identifyFormat: never outside the list, generic when the standard is not listed', () => {
  it('DataCite kernel-4 (not in the list) is published as XML data, and as itself when configured extra', () => {
    const d = detectFormat({ name: 'datacite-4.xml', head: file('datacite-4.xml') });
    expect(d).toMatchObject({ formatId: 'text/xml', unlisted: 'http://datacite.org/schema/kernel-4' });
    expect(identifyFormat({ name: 'x', head: file('datacite-4.xml') }, { extraFormats: ['http://datacite.org/schema/kernel-4'] })).toBe('http://datacite.org/schema/kernel-4');
  });

  it('DataONE system metadata is XML data (not science metadata a CN would list as a dataset)', () => {
    expect(idOf('sysmeta.xml')).toBe('text/xml');
  });

  it('plain XML is text/xml whatever the list says .xml means, RDF without ORE is RDF/XML', () => {
    expect(idOf('readings.xml', text('<readings><r t="1">3</r></readings>'))).toBe('text/xml');
    expect(idOf('graph.rdf', text('<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"/>'))).toBe('application/rdf+xml');
    expect(idOf('empty.xml', new Uint8Array())).toBe('text/xml');
  });

  it('returns only formatIds of the list for any bytes and name (property)', () => {
    const names = fc.constantFrom('a.xml', 'b', 'c.csv', 'Blandy.76.2', 'd.rdf', 'e.json', 'f.nc', 'g.jpg', 'h.mat', 'i.tar.gz', 'j.zz');
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 600 }),
      fc.string({ maxLength: 300 }).map((s) => text(`<?xml version="1.0"?><${s}`)),
      fc.string({ maxLength: 300 }).map((s) => text(`{"@context":${s}`)),
      fc.string({ maxLength: 300 }).map((s) => Uint8Array.from([0x43, 0x44, 0x46, 0x01, ...text(s)])),
    );
    fc.assert(fc.property(names, bytes, (name, b) => formatById(identifyFormat({ name, head: b })) !== undefined), { seed: 18, numRuns: 2000 });
  });

  it('scans a hostile head in linear time', () => {
    const hostile = [
      text(`<${'a'.repeat(HEAD_BYTES)}`),
      text(`<a ${'b="'.repeat(HEAD_BYTES / 3)}`),
      text(`<!DOCTYPE a [${'<!--'.repeat(HEAD_BYTES / 4)}`),
      text(`${'['.repeat(HEAD_BYTES)}`),
      text(`{"@context":${'{"a":'.repeat(HEAD_BYTES / 5)}`),
      text(`${'"a,'.repeat(HEAD_BYTES / 3)}\n`),
      text(`<gmd:MD_Metadata xmlns:gmd="http://www.isotc211.org/2005/gmd">${'<fileIdentifier'.repeat(HEAD_BYTES / 15)}`),
    ];
    const started = performance.now();
    for (let k = 0; k < 50; k++) for (const h of hostile) identifyFormat({ name: 'x', head: h });
    expect(performance.now() - started).toBeLessThan(2000);
  });
});

describe('identifyFormat: data by signature, by table shape, then extension and media type', () => {
  it('netCDF classic: CF conventions from the header, netCDF-3 without', () => {
    expect(idOf('sst.nc', netcdfClassicFile({ Conventions: 'CF-1.6', title: 'Sea surface temperature' }))).toBe('CF-1.6');
    expect(idOf('sst', netcdfClassicFile({ Conventions: 'CF-1.10' }))).toBe('netCDF-CF');
    expect(idOf('raw.nc', netcdfClassicFile({ history: 'made by hand' }))).toBe('netCDF-3');
    expect(idOf('odd.nc', netcdfClassicFile({}))).toBe('netCDF-3');
    const hdf5 = Uint8Array.from([0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]);
    expect(idOf('model.nc', hdf5)).toBe('netCDF-4');
    expect(idOf('model.h5', hdf5)).toBe('application/x-hdf5');
  });

  it('CSV and TSV by their shape when the name says nothing; a .txt stays text', () => {
    expect(idOf('soil_temp.csv')).toBe('text/csv');
    expect(idOf('soil_temp', file('soil_temp.csv'))).toBe('text/csv');
    expect(idOf('counts', file('counts.tsv'))).toBe('text/tsv');
    expect(idOf('notes.txt', file('soil_temp.csv'))).toBe('text/plain');
    expect(idOf('readme', text('Hello,\nthis is a note.\n'))).toBe('text/plain');
  });

  it('signatures of the list: PDF, PNG, JPEG, zip, gzip; specialised first readings of extensions corrected', () => {
    expect(idOf('report', text('%PDF-1.7\n%âãÏÓ\n'))).toBe('application/pdf');
    expect(idOf('photo.jpg', Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]))).toBe('image/jpeg');
    expect(idOf('photo.jpg', new Uint8Array([1, 2, 3, 0, 0]))).toBe('image/jpeg');
    expect(idOf('x', Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe('image/png');
    expect(idOf('bundle', Uint8Array.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0]))).toBe('application/zip');
    expect(idOf('x.gz', Uint8Array.from([0x1f, 0x8b, 8, 0]))).toBe('application/x-gzip');
    expect(idOf('x.mat', text('MATLAB 5.0 MAT-file, Platform: GLNXA64'))).toBe('application/MATLAB-v7');
  });

  it('falls back to the media type, then octet-stream', () => {
    expect(idOf('blob', Uint8Array.from([0, 1, 2, 3, 255, 254]), 'text/csv')).toBe('text/csv');
    expect(idOf('blob', Uint8Array.from([0, 1, 2, 3, 255, 254]), 'application/octet-stream')).toBe('application/octet-stream');
    expect(idOf('blob', new Uint8Array())).toBe('application/octet-stream');
  });

  it('JSON: JSON-LD other than a Dataset, GeoJSON, plain JSON, and a schema.org Dataset in a @graph', () => {
    expect(idOf('x', text('{"@context":"https://schema.org","@type":"Person","name":"A"}'))).toBe('application/json-ld');
    expect(idOf('x', text('{"@context":["https://schema.org/"],"@graph":[{"@type":"schema:Dataset","name":"A"}]}'))).toBe('science-on-schema.org/Dataset;ld+json');
    expect(idOf('x', text('{"type":"FeatureCollection","features":[]}'))).toBe('application/geo+json');
    expect(idOf('x', text('{"values":[1,2,3]}'))).toBe('application/json');
    // A Dataset named by a nested node is not the document's type.
    expect(idOf('x', text('{"@context":"https://schema.org","@type":"DataCatalog","dataset":{"@type":"Dataset"}}'))).toBe('application/json-ld');
  });

  it('every formatId of the list the module can name is one the list has', () => {
    const listed = new Set(allFormats().map((f) => f.formatId));
    expect(listed.has('science-on-schema.org/Dataset;ld+json')).toBe(true);
    const seen = new Set<string>();
    for (const name of ['a.xml', 'a.rdf', 'a.nc', 'a.jpg', 'a.mat', 'a.json', 'a.jsonld', 'a.tsv', 'a.csv', 'a.h5', 'a.tif', 'a.zip', 'a.r', 'a.md']) seen.add(idOf(name, new Uint8Array()));
    for (const id of seen) expect(listed.has(id), id).toBe(true);
  });
});

describe('FormatRules: overrides by glob and by extension, extra formats', () => {
  const rules = new FormatRules({
    overrides: { '**/*.eml.xml': 'eml://ecoinformatics.org/eml-2.1.1', 'data/**': 'text/csv', dat: 'text/plain', 'iso/*.xml': 'http://www.isotc211.org/2005/gmd', '*.dc4': 'http://datacite.org/schema/kernel-4' },
    extraFormats: ['http://datacite.org/schema/kernel-4'],
  });
  const fmt = (path: string, bytes = new Uint8Array()) => rules.identify(path, { head: bytes });

  it('globs match paths (with /) or file names at any depth (without), in order, before extensions', () => {
    expect(fmt('site/a/station.eml.xml').formatId).toBe('eml://ecoinformatics.org/eml-2.1.1');
    expect(fmt('data/2020/june/readings.dat').formatId).toBe('text/csv');
    expect(fmt('other/readings.dat').formatId).toBe('text/plain');
    expect(fmt('iso/record.xml').formatId).toBe('http://www.isotc211.org/2005/gmd');
    expect(fmt('iso/sub/record.xml', text('<a/>')).formatId).toBe('text/xml');
    expect(fmt('x/y.dc4', file('datacite-4.xml'))).toMatchObject({ formatId: 'http://datacite.org/schema/kernel-4', mediaType: 'text/xml', by: 'override' });
    expect(rules.needsContent('data/x.bin')).toBe(false);
    expect(rules.needsContent('elsewhere/x.bin')).toBe(true);
    // Names that settle the format spare scanners a read; the others are read.
    expect(rules.needsContent('elsewhere/table.csv')).toBe(false);
    expect(rules.needsContent('elsewhere/Blandy.76.2')).toBe(true);
    expect(rules.needsContent('elsewhere/doc.xml')).toBe(true);
  });

  it('an override outside the list (and not extra), or a bad pattern, is an error naming it', () => {
    const problems = formatRulesProblems({ overrides: { '**/*.xml': 'eml://example.org/eml-9', 'a/[b': 'text/csv', ok: 'text/csv' } });
    expect(problems).toHaveLength(2);
    expect(problems[0]).toContain('wrap.formatOverrides["**/*.xml"]');
    expect(problems[0]).toContain('"eml://example.org/eml-9" is not a formatId');
    expect(problems[1]).toContain('wrap.formatOverrides["a/[b"]');
    expect(() => new FormatRules({ overrides: { xml: 'text/xm' } })).toThrow(FormatRulesError);
    expect(formatRulesProblems({ overrides: { xml: 'text/xml', 'eml.xml': 'https://eml.ecoinformatics.org/eml-2.2.0' } })).toEqual([]);
  });

  it('extension overrides keep their old meaning (no dot, any case), multi-part extensions win over shorter ones', () => {
    const r = new FormatRules({ overrides: { xml: 'text/xml', 'EML.XML': 'eml://ecoinformatics.org/eml-2.0.1' } });
    expect(r.identify('a/B.Eml.Xml', { head: new Uint8Array() }).formatId).toBe('eml://ecoinformatics.org/eml-2.0.1');
    expect(r.identify('a/b.xml', { head: file('eml-2.2.0.xml') }).formatId).toBe('text/xml');
  });
});
