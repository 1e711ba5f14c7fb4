import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemberNodeClient } from '@memberkit/client';
import { startViewsNode, sysmeta, type ViewsNode } from './support/node.js';
import { EML, EML_FORMAT, ORE_FORMAT } from './support/dataset.js';
import { unzip } from './support/unzip.js';
import { bagRoot, validateBag } from './support/bagit.js';
import { cutUtf8, safeFileName, safeLocation, stripControls } from '../src/index.js';

const R = 'https://cn.dataone.org/cn/v2/resolve/';
const LONG_NAME = `${'é'.repeat(300)}.csv`;

/** A map as the federation's R client writes it: members with prov:atLocation, one named by its SID. */
function provMap(mapPid: string, members: Array<{ id: string; location?: string }>, emlPid: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ore="http://www.openarchives.org/ore/terms/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:cito="http://purl.org/spar/cito/" xmlns:prov="http://www.w3.org/ns/prov#">
  <rdf:Description rdf:about="${R}${mapPid}">
    <rdf:type rdf:resource="http://www.openarchives.org/ore/terms/ResourceMap"/>
    <ore:describes rdf:resource="${R}${mapPid}#aggregation"/>
  </rdf:Description>
  <rdf:Description rdf:about="${R}${mapPid}#aggregation">
    <rdf:type rdf:resource="http://www.openarchives.org/ore/terms/Aggregation"/>
    <ore:aggregates rdf:resource="${R}${emlPid}"/>
${members.map((m) => `    <ore:aggregates rdf:resource="${R}${encodeURIComponent(m.id)}"/>`).join('\n')}
  </rdf:Description>
${members.map((m) => `  <rdf:Description rdf:about="${R}${encodeURIComponent(m.id)}"><dcterms:identifier>${m.id}</dcterms:identifier><cito:isDocumentedBy rdf:resource="${R}${emlPid}"/>${m.location ? `<prov:atLocation>${m.location}</prov:atLocation>` : ''}</rdf:Description>`).join('\n')}
</rdf:RDF>
`;
}

describe('file names and paths in bags', () => {
  it('names: controls and bidirectional overrides stripped, cut at 200 UTF-8 bytes on code points, extension kept', () => {
    expect(stripControls('invoice\u202Etxt.exe')).toBe('invoicetxt.exe');
    expect(safeFileName('a\u0000b\u2066c\u200Fd\u0085e\r\n.txt')).toBe('abcde.txt');
    const cut = safeFileName(LONG_NAME);
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(200);
    expect(cut.endsWith('.csv')).toBe(true);
    expect(cut).not.toContain('\uFFFD');
    expect(cutUtf8('😀😀😀', 9)).toBe('😀😀');
    expect(Buffer.byteLength(safeFileName('😀'.repeat(100)))).toBeLessThanOrEqual(200);
  });

  it('locations: no traversal, no absolute paths, no URLs', () => {
    expect(safeLocation('data/raw/site1.csv')).toBe('data/raw/site1.csv');
    expect(safeLocation('../../etc/passwd')).toBe('etc/passwd');
    expect(safeLocation('/etc/shadow')).toBe('etc/shadow');
    expect(safeLocation('C:\\Windows\\..\\x.txt')).toBe('Windows/x.txt');
    expect(safeLocation('https://example.org/x.csv')).toBeUndefined();
    expect(safeLocation('../..')).toBeUndefined();
    expect(safeLocation('raw/%2e%2e/%2e%2e/x')).toBe('raw/x');
  });
});

describe('BagIt packages as the federation reads them', () => {
  let node: ViewsNode;
  let dir: string;
  const bytes = { v1: Buffer.from('old version\n'), v2: Buffer.from('new version\n'), site: Buffer.from('site,t\n1,2\n'), evil: Buffer.from('evil\n'), long: Buffer.from('long\n'), bidi: Buffer.from('bidi\n') };

  beforeAll(async () => {
    node = await startViewsNode();
    dir = mkdtempSync(join(tmpdir(), 'memberkit-bag-'));
    const c = new MemberNodeClient({ baseUrl: node.baseUrl, token: node.tokens.writer });
    await c.create('bag-eml', EML, sysmeta('bag-eml', EML, { formatId: EML_FORMAT, fileName: 'metadata.xml' }));
    await c.create('sid-v1', bytes.v1, sysmeta('sid-v1', bytes.v1, { formatId: 'text/plain', fileName: 'series.txt', seriesId: 'series-A' }));
    await c.update('sid-v1', bytes.v2, 'sid-v2', sysmeta('sid-v2', bytes.v2, { formatId: 'text/plain', fileName: 'series.txt', seriesId: 'series-A', obsoletes: 'sid-v1' }));
    await c.create('site1', bytes.site, sysmeta('site1', bytes.site, { formatId: 'text/csv', fileName: 'site1.csv' }));
    await c.create('evil', bytes.evil, sysmeta('evil', bytes.evil, { formatId: 'text/plain', fileName: 'evil.txt' }));
    await c.create('long', bytes.long, sysmeta('long', bytes.long, { formatId: 'text/csv', fileName: LONG_NAME }));
    await c.create('bidi', bytes.bidi, sysmeta('bidi', bytes.bidi, { formatId: 'text/plain', fileName: 'invoice\u202Etxt.exe' }));
    const map = provMap(
      'prov-map',
      [{ id: 'series-A' }, { id: 'site1', location: 'data/raw/site1.csv' }, { id: 'evil', location: '../../../etc/passwd' }, { id: 'long' }, { id: 'bidi' }],
      'bag-eml',
    );
    await c.create('prov-map', map, sysmeta('prov-map', Buffer.from(map), { formatId: ORE_FORMAT }));
  });
  afterAll(async () => {
    await node?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('one base directory; SID member is the series head; prov:atLocation followed safely; unzip accepts it', async () => {
    const res = await fetch(`${node.baseUrl}/v2/packages/application%2Fbagit-097/prov-map`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('private');
    expect(res.headers.get('vary')).toMatch(/Authorization/);
    expect(res.headers.get('content-disposition')).toContain('filename="prov-map.zip"');
    const zip = Buffer.from(await res.arrayBuffer());
    const { base, entries } = bagRoot(unzip(zip));
    expect(base).toBe('prov-map');
    expect(validateBag(entries)).toEqual([]);
    expect(entries.get('data/series.txt')?.data.equals(bytes.v2)).toBe(true);
    expect(entries.get('data/raw/site1.csv')?.data.equals(bytes.site)).toBe(true);
    expect(entries.get('data/etc/passwd')?.data.equals(bytes.evil)).toBe(true);
    expect(entries.get('data/invoicetxt.exe')?.data.equals(bytes.bidi)).toBe(true);
    expect(entries.has('withheld.txt')).toBe(false);
    const longEntry = [...entries.keys()].find((n) => n.startsWith('data/é'))!;
    expect(Buffer.byteLength(longEntry.slice('data/'.length))).toBeLessThanOrEqual(200);
    expect(longEntry.endsWith('.csv')).toBe(true);
    for (const name of entries.keys()) expect(name).not.toMatch(/[\u202a-\u202e\u2066-\u2069\u200e\u200f]|\.\.|^\//);
    expect(entries.get('pid-mapping.txt')!.data.toString()).toContain('sid-v2 data/series.txt\n');

    // The real unzip: lists one folder holding bagit.txt, manifests and data/; every CRC checks.
    const file = join(dir, 'bag.zip');
    writeFileSync(file, zip);
    expect(execFileSync('unzip', ['-t', file]).toString()).toMatch(/No errors detected/);
    const listed = execFileSync('unzip', ['-Z1', file]).toString().trim().split('\n');
    expect(new Set(listed.map((n) => n.split('/')[0]))).toEqual(new Set(['prov-map']));
    expect(listed).toContain('prov-map/bagit.txt');
    expect(listed).toContain('prov-map/manifest-md5.txt');
    execFileSync('unzip', ['-q', file, '-d', join(dir, 'out')]);
    const manifest = execFileSync('cat', [join(dir, 'out/prov-map/manifest-md5.txt')]).toString();
    // md5sum -c run inside the bag checks every payload file against the manifest.
    expect(execFileSync('md5sum', ['-c', '--strict'], { cwd: join(dir, 'out/prov-map'), input: manifest }).toString()).not.toMatch(/FAILED/);
  });
});
