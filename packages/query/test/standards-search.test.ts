/**
 * Search over documents of every standard the federation holds (the science package's
 * fixtures/standards), uploaded to a real node and read by its indexer's worker threads:
 * queries written for the Coordinating Node's index find the same documents here.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ids, startQueryNode, sysmetaFor, type QueryNode } from './node.js';

const enc = encodeURIComponent;
const fixture = (name: string): Uint8Array => new Uint8Array(readFileSync(new URL(`../../science/test/fixtures/standards/${name}`, import.meta.url)));

const DOCS: Array<[pid: string, file: string, formatId: string]> = [
  ['std.eml', 'eml-2.0.1-references.xml', 'eml://ecoinformatics.org/eml-2.0.1'],
  ['std.iso', 'iso19139-gmi-url-roles.xml', 'http://www.isotc211.org/2005/gmd'],
  ['std.fgdc', 'fgdc-csdgm.xml', 'FGDC-STD-001-1998'],
  ['std.esri', 'esri-arcgis.xml', 'http://www.esri.com/metadata/esriprof80.dtd'],
  ['std.datacite', 'datacite-3-points.xml', 'http://datacite.org/schema/kernel-3.1'],
  ['std.dc', 'dublin-core-affiliation.xml', 'http://www.openarchives.org/OAI/2.0/oai_dc/'],
  ['std.jsonld', 'schema-org-dataset.jsonld', 'science-on-schema.org/Dataset;ld+json'],
  ['std.dryad', 'dryad-package.xml', 'http://datadryad.org/profile/v3.1'],
  ['std.mercury', 'mercury.xml', 'http://purl.org/ornl/schema/mercury/terms/v1.0'],
];

describe('search over every standard (SQLite index, real node)', () => {
  let node: QueryNode;

  beforeAll(async () => {
    node = await startQueryNode({ index: { kind: 'sqlite', file: ':memory:' } });
    const writer = node.client('writer');
    for (const [pid, file, formatId] of DOCS) {
      const bytes = fixture(file);
      await writer.create(pid, bytes, sysmetaFor(pid, bytes, formatId, node.subjects.writer));
    }
    await node.ext.indexer!.settled();
  }, 60_000);

  afterAll(async () => {
    await node?.stop();
  });

  it('every document is indexed with its title', async () => {
    for (const [pid, , formatId] of DOCS) {
      expect(await ids(node, `q=${enc(`formatId:"${formatId}" AND title:*`)}`), pid).toEqual([pid]);
    }
    expect(await ids(node, 'q=title:borehole')).toEqual(['std.jsonld']);
    expect(await ids(node, 'q=title:eelgrass')).toEqual(['std.esri']);
  });

  it('investigator and origin: names as the document writes them, as displayed, and family names (as the CN indexes EML/schema.org)', async () => {
    // ISO individualName "Sarah McClure" as written; Dublin Core "McClure, Sarah (Penn State)" displayed.
    expect(await ids(node, `q=${enc('investigator:"Sarah McClure"')}`)).toEqual(['std.dc', 'std.iso']);
    expect(await ids(node, `q=${enc('investigator:"McClure, Sarah (Penn State)"')}`)).toEqual(['std.dc']);
    expect(await ids(node, 'q=investigator:McClure')).toEqual(['std.dc', 'std.iso']);
    // DataCite "Peach, A." as written (the CN's origin and investigator), and as displayed.
    expect(await ids(node, `q=${enc('investigator:"Peach, A."')}`)).toEqual(['std.datacite']);
    expect(await ids(node, `q=${enc('origin:"Peach, A."')}`)).toEqual(['std.datacite']);
    expect(await ids(node, `q=${enc('author:"Peach, A."')}`)).toEqual(['std.datacite']);
    expect(await ids(node, `q=${enc('origin:"A. Peach"')}`)).toEqual(['std.datacite']);
    // EML: family names; a creator given by <references> is found.
    expect(await ids(node, 'q=investigator:Kratzenberg')).toEqual(['std.eml']);
    expect(await ids(node, `q=${enc('origin:"North Temperate Lakes LTER"')}`)).toEqual(['std.eml']);
    // ISO "Okafor, Chidi" written with a comma; the publisher is no author.
    expect(await ids(node, `q=${enc('investigator:"Okafor, Chidi"')}`)).toEqual(['std.iso']);
    expect(await ids(node, `q=${enc('origin:"NASA National Snow and Ice Data Center DAAC"')}`)).toEqual([]);
    // FGDC, Dryad, Mercury and schema.org creators.
    expect(await ids(node, `q=${enc('origin:"U.S. Geological Survey"')}`)).toEqual(['std.fgdc']);
    expect(await ids(node, `q=${enc('investigator:"Okonjo, Grace"')}`)).toEqual(['std.dryad']);
    expect(await ids(node, 'q=investigator:Pritchard')).toEqual(['std.mercury']);
    expect(await ids(node, 'q=investigator:Nowak-Ahmed')).toEqual(['std.jsonld']);
  });

  it('keywords, dates and bounding coordinates', async () => {
    expect(await ids(node, `q=${enc('keywords:"fine roots"')}`)).toEqual(['std.mercury']);
    expect(await ids(node, `q=${enc('keywords:"trace elements"')}`)).toEqual(['std.fgdc']);
    expect(await ids(node, 'q=keywords:boreholes')).toEqual(['std.jsonld']);
    expect(await ids(node, `q=${enc('beginDate:[2009-01-01T00:00:00Z TO 2009-12-31T00:00:00Z]')}`)).toEqual(['std.datacite', 'std.fgdc']);
    expect(await ids(node, `q=${enc('pubDate:[2014-03-01T00:00:00Z TO 2014-03-01T23:59:59Z]')}`)).toEqual(['std.iso']);
    expect(await ids(node, `q=${enc('northBoundCoord:[71 TO 72]')}`)).toEqual(['std.jsonld']);
    expect(await ids(node, `q=${enc('westBoundCoord:[-85 TO -84]')}`)).toEqual(['std.datacite']);
    // A place without coordinates is found by its name in the full text.
    expect(await ids(node, `q=${enc('"Oak Ridge Reservation"')}`)).toEqual(['std.datacite']);
  });
});
