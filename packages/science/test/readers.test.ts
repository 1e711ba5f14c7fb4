import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeDocument, isResourceMapFormat, isScienceMetadataFormat, readResourceMap, readResourceMapResult, readScienceMetadata, ScienceCache } from '../src/index.js';

const fixture = (name: string): string => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

describe('EML', () => {
  it('reads EML 2.2.0: title, creators, abstract, keywords, coverage, license', () => {
    const md = readScienceMetadata('https://eml.ecoinformatics.org/eml-2.2.0', fixture('eml-2.2.0.xml'))!;
    expect(md.formatId).toBe('https://eml.ecoinformatics.org/eml-2.2.0');
    expect(md.title).toBe('Soil temperature and moisture at Toolik Field Station, Alaska, 2016–2019');
    expect(md.creators).toEqual([
      { name: 'Maria J. Okonkwo-Lind', kind: 'person', givenName: 'Maria J.', familyName: 'Okonkwo-Lind', organization: 'University of Alaska Fairbanks', email: 'mjokonkwo@alaska.edu', orcid: 'https://orcid.org/0000-0002-1825-0097' },
      { name: 'Tomás Ibáñez', kind: 'person', givenName: 'Tomás', familyName: 'Ibáñez', organization: 'Institute of Arctic Biology' },
      { name: 'Toolik Field Station Environmental Data Center', kind: 'organization', organization: 'Toolik Field Station Environmental Data Center' },
    ]);
    expect(md.abstract).toContain('Overview\n\nHourly soil temperature');
    expect(md.abstract).toContain('Toolik Lake & the Kuparuk River');
    expect(md.abstract!.split('\n\n')).toContain('Sensors were recalibrated every summer; see methods for gap filling.');
    expect(md.keywords).toEqual(['soil temperature', 'soil moisture', 'permafrost', 'Arctic']);
    expect(md.temporal).toEqual([{ begin: '2016-06-01', end: '2019-08-31' }]);
    expect(md.spatial).toEqual([{ west: -149.6, east: -149.5, north: 68.65, south: 68.61, description: 'Toolik Field Station, North Slope Borough, Alaska' }]);
    expect(md.license).toEqual({ name: 'Creative Commons Attribution 4.0 International', url: 'https://spdx.org/licenses/CC-BY-4.0.html' });
    expect(md.publisher).toBe('NSF Arctic Data Center');
    expect(md.pubDate).toBe('2020-03-14');
    expect(md.alternateIdentifiers).toEqual(['doi:10.18739/A2KW57K2P']);
  });

  it('reads EML 2.1.1: intellectualRights link, single dates, position-only creators, ORCID without URL', () => {
    const md = readScienceMetadata('eml://ecoinformatics.org/eml-2.1.1', Buffer.from(fixture('eml-2.1.1.xml')))!;
    expect(md.title).toMatch(/^Kelp forest community dynamics/);
    expect(md.creators[0]).toMatchObject({ name: 'Daniel Reedman', orcid: 'https://orcid.org/0000-0001-5109-3700' });
    expect(md.creators[1]).toEqual({ name: 'Information Manager' });
    expect(md.license?.url).toBe('https://creativecommons.org/licenses/by/4.0/');
    expect(md.license?.name).toContain('Attribution 4.0 International');
    expect(md.temporal).toEqual([{ begin: '2000-08-01', end: '2000-08-01' }]);
    expect(md.spatial).toHaveLength(1);
    expect(md.publisher).toBe('Sam Publisher');
    expect(md.pubDate).toBe('2014');
  });

  it('reads the same document under any namespace prefix or none', () => {
    const renamed = fixture('eml-2.1.1.xml').replaceAll('eml:eml', 'ns2:eml').replace('xmlns:eml=', 'xmlns:ns2=');
    expect(readScienceMetadata('eml://ecoinformatics.org/eml-2.1.1', renamed)?.title).toMatch(/^Kelp forest/);
  });
});

describe('ISO 19139', () => {
  it('reads citation, authors by role, keywords (Anchor too), extents, constraints', () => {
    const md = readScienceMetadata('http://www.isotc211.org/2005/gmd-noaa', fixture('iso19139.xml'))!;
    expect(md.title).toBe('Sea surface salinity from glider transects, Gulf of Maine, 2018');
    expect(md.creators).toEqual([
      { name: 'Leila Haddad', kind: 'person', written: 'Haddad, Leila', givenName: 'Leila', familyName: 'Haddad', organization: 'Bigelow Laboratory for Ocean Sciences', email: 'lhaddad@bigelow.example', orcid: 'https://orcid.org/0000-0003-1415-9269' },
      // A name without a comma is still a person (individualName), split for citation, kept as written.
      { name: 'Peter Lindqvist', kind: 'person', givenName: 'Peter', familyName: 'Lindqvist' },
    ]);
    expect(md.publisher).toBe('NOAA National Centers for Environmental Information');
    expect(md.abstract).toMatch(/^Salinity and temperature profiles/);
    expect(md.keywords).toEqual(['OCEAN SALINITY', 'GLIDERS']);
    expect(md.spatial).toEqual([{ west: -70.5, east: -68, north: 43.9, south: 42.1, description: 'Gulf of Maine' }]);
    expect(md.temporal).toEqual([{ begin: '2018-04-02T00:00:00Z', end: '2018-10-30T23:59:59Z' }]);
    expect(md.license).toEqual({ name: 'CC0 1.0 Universal', url: 'https://creativecommons.org/publicdomain/zero/1.0/' });
    expect(md.pubDate).toBe('2019-02-11');
    expect(md.alternateIdentifiers).toEqual(['doi:10.7289/V5ABCDEF', 'gov.noaa.nodc:0123456']);
  });
});

describe('DataCite', () => {
  it('reads kernel 4', () => {
    const md = readScienceMetadata('http://datacite.org/schema/kernel-4', fixture('datacite-4.xml'))!;
    expect(md.title).toBe('Boundary layer wind profiler data, SOCRATES campaign');
    expect(md.creators).toEqual([
      { name: 'Aiko Nakamura', kind: 'person', written: 'Nakamura, Aiko', givenName: 'Aiko', familyName: 'Nakamura', orcid: 'https://orcid.org/0000-0001-7777-1234', organization: 'National Center for Atmospheric Research' },
      { name: 'Earth Observing Laboratory', kind: 'organization', organization: 'Earth Observing Laboratory' },
    ]);
    expect(md.abstract).toMatch(/^Hourly winds/);
    expect(md.keywords).toEqual(['wind profiler', 'ATMOSPHERE > ATMOSPHERIC WINDS']);
    expect(md.temporal).toEqual([{ begin: '2018-01-15', end: '2018-02-26' }]);
    expect(md.spatial).toEqual([{ west: 133, east: 163, north: -42, south: -62, description: 'Southern Ocean south of Tasmania' }]);
    expect(md.license).toEqual({ name: 'Creative Commons Attribution 4.0 International', url: 'https://creativecommons.org/licenses/by/4.0/' });
    expect(md.publisher).toBe('UCAR/NCAR - Earth Observing Laboratory');
    expect(md.pubDate).toBe('2018');
    expect(md.alternateIdentifiers).toEqual(['doi:10.5065/D6WQ0220', '552.033']);
  });

  it('reads kernel 3 (box as one string, "Family, Given" names)', () => {
    const md = readScienceMetadata('http://datacite.org/schema/kernel-3.1', fixture('datacite-3.xml'))!;
    expect(md.creators).toEqual([{ name: 'Jordan Smith', kind: 'person', written: 'Smith, Jordan', givenName: 'Jordan', familyName: 'Smith' }]);
    expect(md.spatial).toEqual([{ south: 41, west: -72.5, north: 42.5, east: -70, description: 'Massachusetts' }]);
  });
});

describe('Dublin Core', () => {
  it('reads ONEDCX with DCMI Box and Period', () => {
    const md = readScienceMetadata('http://ns.dataone.org/metadata/schema/onedcx/v1.0', fixture('onedcx.xml'))!;
    expect(md.title).toBe('Stream chemistry of the Hubbard Brook watershed 6');
    expect(md.creators.map((c) => c.name)).toEqual(['Gene Likens', 'Hubbard Brook Ecosystem Study']);
    expect(md.abstract).toMatch(/^Weekly grab samples/);
    expect(md.keywords).toEqual(['stream chemistry', 'nitrate']);
    expect(md.temporal).toEqual([{ begin: '1963-06-01', end: '2010-12-31' }]);
    expect(md.spatial).toEqual([{ west: -71.745, east: -71.738, north: 43.957, south: 43.95, description: 'Watershed 6' }]);
    expect(md.license).toEqual({ url: 'https://creativecommons.org/publicdomain/zero/1.0/' });
    expect(md.alternateIdentifiers).toEqual(['hbr.1.3']);
  });

  it('reads oai_dc', () => {
    const xml = `<oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>T</dc:title><dc:creator>A. Person</dc:creator><dc:description>D</dc:description></oai_dc:dc>`;
    expect(readScienceMetadata('http://www.openarchives.org/OAI/2.0/oai_dc/', xml)).toMatchObject({ title: 'T', creators: [{ name: 'A. Person' }], abstract: 'D' });
  });
});

describe('format support and bad documents', () => {
  it('knows which formats it reads', () => {
    for (const f of ['eml://ecoinformatics.org/eml-2.0.1', 'https://eml.ecoinformatics.org/eml-2.2.0', 'http://www.isotc211.org/2005/gmd', 'http://datacite.org/schema/kernel-4', 'http://ns.dataone.org/metadata/schema/onedcx/v1.0'])
      expect(isScienceMetadataFormat(f)).toBe(true);
    for (const f of ['text/csv', 'ddi:codebook:2_5', 'http://www.openarchives.org/ore/terms']) expect(isScienceMetadataFormat(f)).toBe(false);
    expect(isResourceMapFormat('http://www.openarchives.org/ore/terms')).toBe(true);
    expect(readScienceMetadata('ddi:codebook:2_5', '<codeBook/>')).toBeUndefined();
  });

  it('never throws: not XML, truncated, DOCTYPE/entities, empty, oversized, binary', () => {
    const eml = fixture('eml-2.2.0.xml');
    const f = 'https://eml.ecoinformatics.org/eml-2.2.0';
    const bomb = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]><eml:eml xmlns:eml="x"><dataset><title>&lol2;</title></dataset></eml:eml>`;
    const xxe = `<?xml version="1.0"?><!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><eml><dataset><title>&xxe;</title></dataset></eml>`;
    for (const bad of ['', 'not xml at all', eml.slice(0, eml.length / 2), bomb, xxe, new Uint8Array([0xff, 0xfe, 0x00, 0xd8, 0x00]), '<eml><dataset><title>unclosed</dataset></eml>'])
      expect(() => readScienceMetadata(f, bad)).not.toThrow();
    expect(readScienceMetadata(f, bomb)).toBeUndefined();
    expect(readScienceMetadata(f, xxe)).toBeUndefined();
    expect(readScienceMetadata(f, eml.slice(0, eml.length / 2))).toBeUndefined();
    expect(readScienceMetadata(f, eml, { maxBytes: 1000 })).toBeUndefined();
  });

  it('a well-formed document of the wrong shape gives a partial (empty) result', () => {
    const md = readScienceMetadata('https://eml.ecoinformatics.org/eml-2.2.0', '<eml:eml xmlns:eml="https://eml.ecoinformatics.org/eml-2.2.0"><dataset><title>Only a title</title><coverage><geographicCoverage><boundingCoordinates><westBoundingCoordinate>west</westBoundingCoordinate></boundingCoordinates></geographicCoverage></coverage></dataset></eml:eml>');
    expect(md).toEqual({ formatId: 'https://eml.ecoinformatics.org/eml-2.2.0', title: 'Only a title', creators: [], keywords: [], temporal: [], spatial: [], alternateIdentifiers: [] });
  });
});

describe('encoding', () => {
  const doc = (declared: string, title: string, encode: (s: string) => Buffer) =>
    encode(`<?xml version="1.0" encoding="${declared}"?><eml:eml xmlns:eml="https://eml.ecoinformatics.org/eml-2.2.0"><dataset><title>${title}</title></dataset></eml:eml>`);
  const f = 'https://eml.ecoinformatics.org/eml-2.2.0';

  it('UTF-8 bytes declared as ISO-8859-1 or windows-1252 are read as UTF-8 (no mojibake)', () => {
    for (const declared of ['ISO-8859-1', 'windows-1252', 'latin1', 'US-ASCII'])
      expect(readScienceMetadata(f, doc(declared, 'Tomás Ibáñez – Øresund', (s) => Buffer.from(s, 'utf8')))?.title).toBe('Tomás Ibáñez – Øresund');
    // A declaration of UTF-16 over bytes whose declaration was readable as ASCII cannot be right.
    expect(readScienceMetadata(f, doc('UTF-16', 'Zürich', (s) => Buffer.from(s, 'utf8')))?.title).toBe('Zürich');
  });

  it('real Latin-1 bytes (not valid UTF-8) still follow their declaration', () => {
    expect(readScienceMetadata(f, doc('ISO-8859-1', 'Tomás Ibáñez', (s) => Buffer.from(s, 'latin1')))?.title).toBe('Tomás Ibáñez');
    expect(decodeDocument(doc('windows-1252', 'caf\u00e9 \x93quoted\x94', (s) => Buffer.from(s, 'latin1')))).toContain('café ');
    // ASCII-only documents are the same in every declaration.
    expect(readScienceMetadata(f, doc('ISO-8859-1', 'plain', (s) => Buffer.from(s, 'latin1')))?.title).toBe('plain');
  });
});

describe('OAI-ORE resource maps', () => {
  it('reads the aggregation, members and documents relations as PIDs', async () => {
    const map = (await readResourceMap(fixture('resource-map.xml')))!;
    expect(map.aggregation).toBe('https://cn.dataone.org/cn/v2/resolve/resource_map_urn%3Auuid%3A4c1d0a2e#aggregation');
    expect(map.resourceMap).toBe('resource_map_urn:uuid:4c1d0a2e');
    expect(map.aggregated).toEqual(['urn:uuid:4c1d0a2e-8f51-4b9e-a7f3-1b2c3d4e5f60', 'toolik_soil_2016_2019.csv', 'sensor/calibration notes.pdf']);
    expect(map.documents).toEqual([
      { metadata: 'urn:uuid:4c1d0a2e-8f51-4b9e-a7f3-1b2c3d4e5f60', data: 'toolik_soil_2016_2019.csv' },
      { metadata: 'urn:uuid:4c1d0a2e-8f51-4b9e-a7f3-1b2c3d4e5f60', data: 'sensor/calibration notes.pdf' },
    ]);
  });

  it('reads maps with blank nodes (rdf:nodeID, labels that are not NCNames) and gives prov:atLocation per member', async () => {
    const r = await readResourceMapResult(Buffer.from(fixture('resource-map-provenance.xml')));
    expect(r.status).toBe('read');
    if (r.status !== 'read') return;
    expect(r.value.resourceMap).toBe('resource_map_lake_ice_7');
    expect(r.value.aggregated).toEqual(['urn:uuid:lake-ice-eml', 'urn:uuid:lake-ice-raw', 'urn:uuid:lake-ice-script', 'urn:uuid:lake-ice-plot']);
    expect(r.value.documents).toEqual([
      { metadata: 'urn:uuid:lake-ice-eml', data: 'urn:uuid:lake-ice-raw' },
      { metadata: 'urn:uuid:lake-ice-eml', data: 'urn:uuid:lake-ice-script' },
    ]);
    expect(r.value.locations).toEqual([
      { pid: 'urn:uuid:lake-ice-raw', location: 'data/raw/ice_thickness_2019.csv' },
      { pid: 'urn:uuid:lake-ice-script', location: 'scripts/thickness plot.R' },
      { pid: 'urn:uuid:lake-ice-plot', location: 'figures/thickness.png' },
    ]);
    expect((await readResourceMap(fixture('resource-map.xml')))!.locations).toEqual([]);
  });

  it('undefined for bad maps, never throws', async () => {
    expect(await readResourceMap('not xml')).toBeUndefined();
    expect(await readResourceMap('<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"></rdf:RDF>')).toBeUndefined();
    expect(await readResourceMap(fixture('resource-map.xml').slice(0, 900))).toBeUndefined();
    expect(await readResourceMap('<?xml version="1.0"?><!DOCTYPE r [<!ENTITY e SYSTEM "file:///etc/passwd">]><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"/>')).toBeUndefined();
  });
});

describe('ScienceCache', () => {
  it('parses each object version once, shares concurrent loads, keys by serialVersion, evicts LRU', async () => {
    let loads = 0;
    const docs: Record<string, string> = { eml: fixture('eml-2.2.0.xml'), map: fixture('resource-map.xml') };
    const cache = new ScienceCache({
      objects: async (ref) => {
        loads++;
        return Buffer.from(docs[ref.pid]!);
      },
      maxEntries: 2,
    });
    const eml = { pid: 'eml', formatId: 'https://eml.ecoinformatics.org/eml-2.2.0', serialVersion: 1 };
    const [a, b] = await Promise.all([cache.metadata(eml), cache.metadata(eml)]);
    expect(a?.title).toMatch(/^Soil temperature/);
    expect(b).toBe(a);
    expect(loads).toBe(1);
    await cache.metadata({ ...eml, serialVersion: 2 });
    expect(loads).toBe(2);
    const map = await cache.resourceMap({ pid: 'map', formatId: 'http://www.openarchives.org/ore/terms', serialVersion: 1 });
    expect(map?.aggregated).toHaveLength(3);
    expect(cache.size).toBe(2);
    await cache.metadata(eml); // evicted by the map: loaded again
    expect(loads).toBe(4);
    expect(await cache.metadata({ pid: 'x', formatId: 'text/csv', serialVersion: 1 })).toBeUndefined();
    expect(loads).toBe(4);
  });

  it('failed loads give undefined and are not cached; oversized objects are not loaded', async () => {
    let fail = true;
    const cache = new ScienceCache({
      objects: async () => {
        if (fail) throw new Error('storage down');
        return Buffer.from(fixture('eml-2.2.0.xml'));
      },
      maxDocumentBytes: 1 << 20,
    });
    const ref = { pid: 'p', formatId: 'https://eml.ecoinformatics.org/eml-2.2.0', serialVersion: 1 };
    expect(await cache.metadata(ref)).toBeUndefined();
    fail = false;
    expect((await cache.metadata(ref))?.title).toBeTruthy();
    expect(await cache.metadata({ ...ref, pid: 'big', size: 2 << 20 })).toBeUndefined();
    cache.invalidate('p');
    expect(cache.size).toBe(0);
  });
});
