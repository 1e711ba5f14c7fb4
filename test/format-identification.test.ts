// Formats by content, end to end (#18): a wrapped tree mixing EML 2.0.1/2.1.0/2.1.1/2.2.0,
// ISO 19139 (gmd, NOAA gmi, PANGAEA), FGDC (CSDGM, BDP, ESRI), DataCite, Dublin Core,
// schema.org JSON-LD, an OAI-ORE map, system metadata, CSV/TSV, netCDF and extensionless
// files, served by `memberkit serve` over storage type tree: every object gets the formatId
// of what it holds, in listObjects and in its system metadata (XSD-valid), and overrides by
// glob and extension apply. An override outside the federation's list stops `memberkit scan`.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ObjectListCodec, SystemMetadataCodec } from '@memberkit/types';
import { validateXml } from '@memberkit/testkit';
import { netcdfClassicFile } from '../packages/science/test/formats/netcdf-header.js';
import { startNodeProcess, writeConfig, type NodeProcess } from './support/node-process.js';

const ROOT = join(import.meta.dirname, '..');
const FIXTURES = join(ROOT, 'packages/science/test/formats/fixtures');

/** Path in the wrapped tree → fixture copied there (or bytes) and the formatId it must get. */
const TREE: Array<{ path: string; from: string | Uint8Array; formatId: string }> = [
  { path: 'knb/eml-2.0.1.xml', from: 'eml-2.0.1.xml', formatId: 'eml://ecoinformatics.org/eml-2.0.1' },
  { path: 'knb/Blandy.76.2', from: 'Blandy.76.2', formatId: 'eml://ecoinformatics.org/eml-2.1.0' },
  { path: 'station/metadata.xml', from: 'eml-2.1.1.xml', formatId: 'eml://ecoinformatics.org/eml-2.1.1' },
  { path: 'station/soil_temp.csv', from: 'soil_temp.csv', formatId: 'text/csv' },
  { path: 'station/resource_map_station.44.3.rdf', from: 'resource-map.rdf', formatId: 'http://www.openarchives.org/ore/terms' },
  { path: 'station/sysmeta/station.44.3.xml', from: 'sysmeta.xml', formatId: 'text/xml' },
  { path: 'lake/eml.xml', from: 'eml-2.2.0.xml', formatId: 'https://eml.ecoinformatics.org/eml-2.2.0' },
  { path: 'lake/counts', from: 'counts.tsv', formatId: 'text/tsv' },
  { path: 'iso/snow.xml', from: 'iso19139-gmd.xml', formatId: 'http://www.isotc211.org/2005/gmd' },
  { path: 'iso/noaa-buoy.xml', from: 'iso19139-gmi-noaa.xml', formatId: 'http://www.isotc211.org/2005/gmd-noaa' },
  { path: 'iso/PANGAEA.900001', from: 'iso19139-pangaea.xml', formatId: 'http://www.isotc211.org/2005/gmd-pangaea' },
  { path: 'fgdc/wells.xml', from: 'fgdc.xml', formatId: 'FGDC-STD-001-1998' },
  { path: 'fgdc/grasshoppers.xml', from: 'fgdc-bdp.xml', formatId: 'FGDC-STD-001.1-1999' },
  { path: 'fgdc/trails.shp.xml', from: 'esri-profile.xml', formatId: 'http://www.esri.com/metadata/esriprof80.dtd' },
  { path: 'doi/pollinators.xml', from: 'datacite-3.1.xml', formatId: 'http://datacite.org/schema/kernel-3.1' },
  // Not in the federation's list: published as itself only because the configuration names it.
  { path: 'doi/discharge.xml', from: 'datacite-4.xml', formatId: 'http://datacite.org/schema/kernel-4' },
  { path: 'dc/oai_dc.xml', from: 'oai_dc.xml', formatId: 'http://www.openarchives.org/OAI/2.0/oai_dc/' },
  { path: 'dc/ice-out', from: 'onedcx.xml', formatId: 'http://ns.dataone.org/metadata/schema/onedcx/v1.0' },
  { path: 'reef/dataset.json', from: 'dataset.jsonld', formatId: 'science-on-schema.org/Dataset;ld+json' },
  { path: 'ocean/sst.nc', from: netcdfClassicFile({ Conventions: 'CF-1.6', title: 'Sea surface temperature' }), formatId: 'CF-1.6' },
  { path: 'ocean/notes.dat', from: new TextEncoder().encode('<readings/>'), formatId: 'text/plain' }, // extension override
  { path: 'curated/site.eml.xml', from: new TextEncoder().encode('<?xml version="1.0"?><record/>'), formatId: 'eml://ecoinformatics.org/eml-2.1.1' }, // glob override
  { path: 'curated/blob', from: Uint8Array.from([0, 1, 2, 250, 251]), formatId: 'application/octet-stream' },
];

const WRAP = {
  rightsHolder: 'CN=archive owner',
  formatOverrides: { '**/*.eml.xml': 'eml://ecoinformatics.org/eml-2.1.1', dat: 'text/plain' },
  extraFormats: ['http://datacite.org/schema/kernel-4'],
};

function cli(args: string[]): { status: number; output: string } {
  try {
    const out = execFileSync(process.execPath, ['--conditions=@memberkit/source', '--import', 'tsx', join(ROOT, 'packages/cli/src/bin.ts'), ...args], {
      cwd: ROOT, env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, 'tsconfig.dev.json') }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'],
    });
    return { status: 0, output: out };
  } catch (e) {
    const err = e as { status: number; stdout: string; stderr: string };
    return { status: err.status, output: `${err.stdout}${err.stderr}` };
  }
}

describe('wrap mode: every file gets the formatId of what it holds', () => {
  let work: string;
  let tree: string;
  let node: NodeProcess;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'memberkit-formats-'));
    tree = join(work, 'archive');
    for (const f of TREE) {
      mkdirSync(join(tree, f.path, '..'), { recursive: true });
      if (typeof f.from === 'string') copyFileSync(join(FIXTURES, f.from), join(tree, f.path));
      else writeFileSync(join(tree, f.path), f.from);
    }
    writeConfig(join(work, 'node'), { storage: { type: 'tree', root: tree }, wrap: WRAP });
    node = await startNodeProcess(join(work, 'node'));
  }, 60_000);
  afterAll(async () => {
    await node?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('lists every file with its formatId, and serves XSD-valid system metadata saying the same', async () => {
    let listed = ObjectListCodec.decode('<?xml version="1.0"?><ns2:objectList xmlns:ns2="http://ns.dataone.org/service/types/v1" count="0" start="0" total="0"/>');
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
      const res = await fetch(`${node.baseUrl}/v2/object?count=1000`);
      expect(res.status).toBe(200);
      listed = ObjectListCodec.decode(await res.text());
      if (listed.total === TREE.length) break;
    }
    const got = new Map((listed.objectInfo ?? []).map((o) => [o.identifier, o.formatId]));
    expect(Object.fromEntries(got)).toEqual(Object.fromEntries(TREE.map((f) => [f.path, f.formatId])));

    for (const f of TREE) {
      const res = await fetch(`${node.baseUrl}/v2/meta/${encodeURIComponent(f.path)}`);
      expect(res.status, f.path).toBe(200);
      const xml = await res.text();
      expect(await validateXml(xml, f.path), f.path).toBeUndefined();
      const sysmeta = SystemMetadataCodec.decode(xml);
      expect(sysmeta.formatId, f.path).toBe(f.formatId);
    }
    // listObjects filters by the identified format, as a CN harvesting metadata does.
    const eml = ObjectListCodec.decode(await (await fetch(`${node.baseUrl}/v2/object?formatId=${encodeURIComponent('eml://ecoinformatics.org/eml-2.1.0')}`)).text());
    expect(eml.objectInfo?.map((o) => o.identifier)).toEqual(['knb/Blandy.76.2']);
  }, 60_000);

  it('memberkit scan refuses an override outside the federation\'s list, naming it', () => {
    const bad = join(work, 'bad');
    writeConfig(bad, { storage: { type: 'tree', root: tree }, wrap: { ...WRAP, extraFormats: [], formatOverrides: { 'knb/**': 'eml://ecoinformatics.org/eml-9.9.9' } } });
    const run = cli(['scan', bad]);
    expect(run.status).not.toBe(0);
    expect(run.output).toContain('wrap.formatOverrides["knb/**"]');
    expect(run.output).toContain('"eml://ecoinformatics.org/eml-9.9.9" is not a formatId');
  }, 60_000);
});
