/**
 * One document per standard the federation holds, written for these tests from each
 * standard's documentation and published examples (fixtures/standards/): each file is
 * identified by content, routed to its reader, and read for title, persons and
 * organisations (as written and split), dates, coverage and keywords.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { identifyFormat, isScienceMetadataFormat, readScienceMetadata, readScienceMetadataResult, type ScienceMetadata } from '../src/index.js';

const bytes = (name: string): Uint8Array => new Uint8Array(readFileSync(new URL(`./fixtures/standards/${name}`, import.meta.url)));

/** The formatId the content gives, and the document read under it. */
function read(name: string, given?: string): { formatId: string; md: ScienceMetadata } {
  const b = bytes(name);
  const formatId = given ?? identifyFormat({ name, head: b.subarray(0, 8192), size: b.byteLength });
  expect(isScienceMetadataFormat(formatId), `${name} identified as ${formatId}`).toBe(true);
  const md = readScienceMetadata(formatId, b);
  expect(md, `${name} read as ${formatId}`).toBeDefined();
  return { formatId, md: md! };
}

describe('EML <references>', () => {
  it('resolves parties given by reference to an earlier (or later) party, for creators and the publisher', () => {
    const { formatId, md } = read('eml-2.0.1-references.xml');
    expect(formatId).toBe('eml://ecoinformatics.org/eml-2.0.1');
    expect(md.title).toBe('Lake ice phenology of Crystal Bog and Trout Lake, 1981-2005');
    expect(md.creators).toEqual([
      { name: 'Rosalind Whitcombe', kind: 'person', givenName: 'Rosalind', familyName: 'Whitcombe', organization: 'Center for Limnology', email: 'rwhitcombe@limnology.example.edu' },
      { name: 'North Temperate Lakes LTER', kind: 'organization', organization: 'North Temperate Lakes LTER' },
      { name: 'Tomasz Kratzenberg', kind: 'person', givenName: 'Tomasz', familyName: 'Kratzenberg', organization: 'Trout Lake Station' },
    ]);
    expect(md.publisher).toBe('North Temperate Lakes LTER');
    expect(md.pubDate).toBe('2006-02-21');
    expect(md.keywords).toEqual(['ice duration', 'phenology']);
    expect(md.temporal).toEqual([{ begin: '1981-11-01', end: '2005-05-15' }]);
    expect(md.spatial).toEqual([{ west: -89.7, east: -89.6, north: 46.08, south: 46, description: 'Trout Lake, Vilas County, Wisconsin' }]);
  });

  it('a reference to nothing, or to itself, drops nothing else and loops on nothing', () => {
    const doc = `<eml:eml xmlns:eml="https://eml.ecoinformatics.org/eml-2.2.0"><dataset><title>T</title>
      <creator id="a"><references>a</references></creator><creator><references>missing</references></creator>
      <creator><individualName><surName>Solo</surName></individualName></creator></dataset></eml:eml>`;
    expect(readScienceMetadata('https://eml.ecoinformatics.org/eml-2.2.0', doc)?.creators).toEqual([{ name: 'Solo', kind: 'person', familyName: 'Solo' }]);
  });
});

describe('ISO 19139 (gmi) with code list URLs', () => {
  it('recognises roles and date types written as URLs; the publisher is not an author; names without a comma are persons', () => {
    const { formatId, md } = read('iso19139-gmi-url-roles.xml');
    expect(formatId).toBe('http://www.isotc211.org/2005/gmd');
    expect(md.title).toBe('Snow water equivalent from airborne gamma surveys, Upper Colorado basin');
    expect(md.creators).toEqual([
      { name: 'Sarah McClure', kind: 'person', givenName: 'Sarah', familyName: 'McClure', organization: 'Pennsylvania State University' },
      { name: 'Chidi Okafor', kind: 'person', written: 'Okafor, Chidi', givenName: 'Chidi', familyName: 'Okafor' },
    ]);
    expect(md.publisher).toBe('NASA National Snow and Ice Data Center DAAC');
    // The publication date, not the first date (a revision) of the citation.
    expect(md.pubDate).toBe('2014-03-01');
    expect(md.keywords).toEqual(['EARTH SCIENCE > CRYOSPHERE > SNOW/ICE > SNOW WATER EQUIVALENT', 'Colorado']);
    expect(md.temporal).toEqual([{ begin: '2008-01-15', end: '2013-04-30' }]);
    expect(md.spatial).toEqual([{ west: -109.1, east: -105.6, north: 41, south: 37 }]);
    expect(md.alternateIdentifiers).toContain('doi:10.5067/EXAMPLE0751');
  });
});

describe('FGDC CSDGM and the ESRI profile', () => {
  it('reads CSDGM: origins as persons or organisations, FGDC dates in ISO form, bounding box, theme and place keys', () => {
    const { formatId, md } = read('fgdc-csdgm.xml');
    expect(formatId).toBe('FGDC-STD-001-1998');
    expect(md.title).toBe('Streambed sediment chemistry of the lower Yakima River basin, Washington');
    expect(md.creators).toEqual([
      { name: 'Hallie Lindgren', kind: 'person', written: 'Lindgren, Hallie', givenName: 'Hallie', familyName: 'Lindgren' },
      { name: 'U.S. Geological Survey', kind: 'organization', organization: 'U.S. Geological Survey' },
    ]);
    expect(md.pubDate).toBe('2011-09-15');
    expect(md.publisher).toBe('U.S. Geological Survey, Washington Water Science Center');
    expect(md.abstract).toMatch(/^Concentrations of trace elements/);
    expect(md.keywords).toEqual(['sediment chemistry', 'trace elements', 'Yakima River']);
    expect(md.temporal).toEqual([{ begin: '2009-06-01', end: '2010-09-30' }]);
    expect(md.spatial).toEqual([{ west: -120.9, east: -119.2, north: 46.9, south: 46.1, description: 'Yakima River' }]);
    expect(md.license?.url).toBe('https://www.usgs.gov/information-policies-and-instructions/copyrights-and-credits');
    expect(md.alternateIdentifiers).toEqual(['https://doi.org/10.5066/F7EXAMPLE']);
  });

  it('reads the ESRI profile as ArcGIS writes it, behind its DOCTYPE (an external DTD, never loaded)', () => {
    const { formatId, md } = read('esri-arcgis.xml');
    expect(formatId).toBe('http://www.esri.com/metadata/esriprof80.dtd');
    expect(md.title).toBe('Eelgrass beds of Padilla Bay, 2017 aerial survey');
    expect(md.creators).toEqual([{ name: 'Joaquín Ferreira', kind: 'person', givenName: 'Joaquín', familyName: 'Ferreira', organization: 'Padilla Bay National Estuarine Research Reserve' }]);
    expect(md.publisher).toBe('Washington State Department of Ecology');
    expect(md.pubDate).toBe('2018-05-01');
    expect(md.abstract).toBe('Polygons of eelgrass (Zostera marina) mapped from 2017 orthophotos.');
    expect(md.keywords).toEqual(['eelgrass', 'Zostera marina']);
    expect(md.temporal).toEqual([{ begin: '2017-07-10', end: '2017-07-12' }]);
    expect(md.spatial).toEqual([{ west: -122.58, east: -122.45, north: 48.6, south: 48.47, description: 'Padilla Bay' }]);
  });

  it('still refuses a DOCTYPE with an internal subset (entities)', () => {
    const doc = `<?xml version="1.0"?><!DOCTYPE metadata [<!ENTITY x "boom">]><metadata><idinfo><citation><citeinfo><title>&x;</title></citeinfo></citation></idinfo></metadata>`;
    expect(readScienceMetadataResult('FGDC-STD-001-1998', doc).status).toBe('unreadable');
  });
});

describe('DataCite', () => {
  it('kernel 3: "Peach, A." kept as written and split; an organisation by its name; a point and a place alone kept', () => {
    const { md } = read('datacite-3-points.xml');
    expect(md.creators).toEqual([
      { name: 'A. Peach', kind: 'person', written: 'Peach, A.', givenName: 'A.', familyName: 'Peach' },
      { name: 'Oak Ridge National Laboratory Distributed Active Archive Center', kind: 'organization', organization: 'Oak Ridge National Laboratory Distributed Active Archive Center' },
    ]);
    expect(md.spatial).toEqual([{ west: -84.287, east: -84.287, north: 35.958, south: 35.958, description: 'Walker Branch Watershed, Tennessee' }]);
    expect(md.places).toEqual(['Oak Ridge Reservation']);
    expect(md.temporal).toEqual([{ begin: '2009-04-01', end: '2011-10-31' }]);
    expect(md.keywords).toEqual(['litter decomposition', 'hardwood forest']);
    expect(md.alternateIdentifiers).toEqual(['doi:10.6073/PASTA/EXAMPLE']);
  });

  it('kernel 4: nameType, given and family names, pointLatitude/pointLongitude', () => {
    // Kernel 4 is not in the federation's format list (identified as XML): read under its own id.
    const { md } = read('datacite-4-points.xml', 'http://datacite.org/schema/kernel-4');
    expect(md.title).toBe('Salinity intrusion in Mekong Delta canals, dry seasons 2016-2020');
    expect(md.creators).toEqual([
      { name: 'Thi Lan Nguyen', kind: 'person', written: 'Nguyen, Thi Lan', givenName: 'Thi Lan', familyName: 'Nguyen', orcid: 'https://orcid.org/0000-0002-9999-0001', organization: 'Can Tho University' },
      { name: 'Mekong Delta Monitoring Network', kind: 'organization', organization: 'Mekong Delta Monitoring Network' },
    ]);
    expect(md.spatial).toEqual([{ west: 106.375, east: 106.375, north: 10.241, south: 10.241, description: 'Ben Tre station' }]);
  });
});

describe('Dublin Core', () => {
  it('"McClure, Sarah (Penn State)": family McClure, given Sarah, the affiliation apart, kept as written', () => {
    const { formatId, md } = read('dublin-core-affiliation.xml');
    expect(formatId).toBe('http://www.openarchives.org/OAI/2.0/oai_dc/');
    expect(md.creators).toEqual([
      { name: 'Sarah McClure', kind: 'person', written: 'McClure, Sarah (Penn State)', givenName: 'Sarah', familyName: 'McClure', organization: 'Penn State' },
      { name: 'Critical Zone Observatory Program', kind: 'organization', organization: 'Critical Zone Observatory Program' },
    ]);
    expect(md.title).toBe('Stream temperature loggers in the Susquehanna Shale Hills observatory');
    expect(md.keywords).toEqual(['stream temperature', 'critical zone']);
    expect(md.pubDate).toBe('2017-09-05');
  });
});

describe('schema.org JSON-LD (science-on-schema.org)', () => {
  it('reads a Dataset: creators in @list order, keywords, temporal and spatial coverage (box and point), DOI, license, distribution', () => {
    const { formatId, md } = read('schema-org-dataset.jsonld');
    expect(formatId).toBe('science-on-schema.org/Dataset;ld+json');
    expect(md.title).toBe('Permafrost borehole temperatures, Utqiagvik, Alaska, 2002-2021');
    expect(md.abstract).toMatch(/^Daily ground temperature/);
    expect(md.creators).toEqual([
      { name: 'Kasia Nowak-Ahmed', kind: 'person', givenName: 'Kasia', familyName: 'Nowak-Ahmed', orcid: 'https://orcid.org/0000-0003-1111-2222', organization: 'University of Alaska Fairbanks' },
      { name: 'Ivan Petrov', kind: 'person', givenName: 'Ivan', familyName: 'Petrov' },
      { name: 'Arctic Data Center', kind: 'organization', organization: 'Arctic Data Center' },
    ]);
    expect(md.keywords).toEqual(['permafrost', 'ground temperature', 'boreholes']);
    expect(md.temporal).toEqual([{ begin: '2002-08-01', end: '2021-07-31' }]);
    expect(md.spatial).toEqual([
      { south: 71.2, west: -156.8, north: 71.35, east: -156.4, description: 'Utqiagvik' },
      { west: -156.61, east: -156.61, north: 71.31, south: 71.31, description: 'Borehole BRW-2' },
    ]);
    expect(md.license).toEqual({ url: 'https://creativecommons.org/licenses/by/4.0/' });
    expect(md.pubDate).toBe('2021-11-02');
    expect(md.publisher).toBe('NSF Arctic Data Center');
    expect(md.alternateIdentifiers).toEqual(['doi:10.18739/A2EXAMPLE']);
    expect(md.distribution).toEqual([{ name: 'borehole_temps.csv', url: 'https://arcticdata.io/metacat/d1/mn/v2/object/urn%3Auuid%3Aexample', mediaType: 'text/csv' }]);
  });

  it('finds the Dataset in an @graph (not a part of another), resolves @id references, prefixed terms', () => {
    const doc = JSON.stringify({
      '@context': { schema: 'http://schema.org/' },
      '@graph': [
        { '@id': '#part', '@type': 'schema:Dataset', 'schema:name': 'A part' },
        { '@id': '#main', '@type': 'schema:Dataset', 'schema:name': 'The whole', 'schema:hasPart': { '@id': '#part' }, 'schema:creator': [{ '@id': '#p1' }] },
        { '@id': '#p1', '@type': 'schema:Person', 'schema:givenName': 'Ana', 'schema:familyName': 'Silva' },
      ],
    });
    const md = readScienceMetadata('science-on-schema.org/Dataset;ld+json', doc)!;
    expect(md.title).toBe('The whole');
    expect(md.creators).toEqual([{ name: 'Ana Silva', kind: 'person', givenName: 'Ana', familyName: 'Silva' }]);
  });

  it('JSON under the same budgets: too large or too deep is not indexed, not JSON is unreadable, withText gives the strings', () => {
    const f = 'science-on-schema.org/Dataset;ld+json';
    const doc = bytes('schema-org-dataset.jsonld');
    expect(readScienceMetadataResult(f, doc, { maxBytes: 200 })).toMatchObject({ status: 'not-indexed', reason: 'larger than 200 bytes' });
    const deep = `{"@type":"Dataset","name":"x","a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
    expect(readScienceMetadataResult(f, deep)).toMatchObject({ status: 'not-indexed', reason: expect.stringMatching(/nested more than 256 deep/) });
    expect(readScienceMetadataResult(f, '{"@type":"Dataset", name}').status).toBe('unreadable');
    expect(readScienceMetadataResult(f, '{"@type":"Person","name":"x"}').status).toBe('unreadable');
    const withText = readScienceMetadataResult(f, doc, { withText: true });
    expect(withText.status === 'read' && withText.text).toContain('Utqiagvik');
  });
});

describe('Dryad and Mercury', () => {
  it('reads a Dryad data package: dcterms creators written "Family, Given", subjects and scientific names, spatial names', () => {
    const { formatId, md } = read('dryad-package.xml');
    expect(formatId).toBe('http://datadryad.org/profile/v3.1');
    expect(md.title).toBe('Data from: Thermal tolerance of intertidal snails along a latitudinal gradient');
    expect(md.creators).toEqual([
      { name: 'Grace Okonjo', kind: 'person', written: 'Okonjo, Grace', givenName: 'Grace', familyName: 'Okonjo' },
      { name: 'Erik A. Lindstrom', kind: 'person', written: 'Lindstrom, Erik A.', givenName: 'Erik A.', familyName: 'Lindstrom' },
    ]);
    expect(md.keywords).toEqual(['thermal tolerance', 'climate change', 'Littorina littorea']);
    expect(md.places).toEqual(['North Atlantic']);
    expect(md.pubDate).toBe('2017-03-22T14:01:00Z');
    expect(md.alternateIdentifiers).toEqual(['http://dx.doi.org/10.5061/dryad.example1']);
  });

  it('reads a Mercury record', () => {
    const { formatId, md } = read('mercury.xml');
    expect(formatId).toBe('http://purl.org/ornl/schema/mercury/terms/v1.0');
    expect(md.title).toBe('Fine root biomass, Duke Forest FACE experiment, 1998-2008');
    expect(md.creators.map((c) => [c.written, c.familyName, c.kind])).toEqual([
      ['Pritchard, Seth G.', 'Pritchard', 'person'],
      ['Oren, Ram', 'Oren', 'person'],
    ]);
    expect(md.keywords).toEqual(['fine roots', 'elevated CO2', 'Duke Forest']);
    expect(md.temporal).toEqual([{ begin: '1998-01-01', end: '2008-12-31' }]);
    expect(md.spatial).toEqual([{ west: -79.1, east: -79.08, north: 35.98, south: 35.97, description: 'Duke Forest' }]);
    expect(md.pubDate).toBe('2010-03-01');
    expect(md.publisher).toBe('ORNL Distributed Active Archive Center');
  });
});
