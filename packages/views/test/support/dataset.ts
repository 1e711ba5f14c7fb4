import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { MemberNodeClient } from '@memberkit/client';
import { resourceMap, sysmeta, type ViewsNode } from './node.js';

export const EML_FORMAT = 'https://eml.ecoinformatics.org/eml-2.2.0';
export const ORE_FORMAT = 'http://www.openarchives.org/ore/terms';

export const EML = readFileSync(new URL('../../../science/test/fixtures/eml-2.2.0.xml', import.meta.url));

export function csv(rows = 400): Buffer {
  const lines = ['timestamp,plot,depth_cm,soil_temp_c,vwc'];
  for (let i = 0; i < rows; i++) {
    const t = new Date(Date.UTC(2016, 5, 1) + i * 3_600_000).toISOString().slice(0, 16);
    lines.push(`${t},${['T1', 'T2', 'T3'][i % 3]},${[5, 10, 20][i % 3]},${(2 + Math.sin(i / 24) * 3).toFixed(2)},${(0.3 + Math.cos(i / 48) * 0.05).toFixed(3)}`);
  }
  return Buffer.from(`${lines.join('\n')}\n`);
}

export const PIDS = {
  eml: 'urn:uuid:4c1d0a2e-8f51-4b9e-a7f3-1b2c3d4e5f60',
  csv: 'toolik_soil_2016_2019.csv',
  pdf: 'sensor/calibration-notes.pdf',
  restricted: 'urn:uuid:restricted-raw-logger-dump',
  map: 'resource_map_urn:uuid:4c1d0a2e',
};

/** A real-looking dataset: EML 2.2, a CSV, a PDF-ish binary, a restricted file, and the resource map. */
export async function loadDataset(node: ViewsNode): Promise<{ csv: Buffer; pdf: Buffer; restricted: Buffer; map: string }> {
  const client = new MemberNodeClient({ baseUrl: node.baseUrl, token: node.tokens.writer });
  const data = csv();
  const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n% calibration\n'), Buffer.alloc(3000, 7), Buffer.from('\n%%EOF\n')]);
  const restricted = Buffer.from('raw logger dump: embargoed until 2030\n');
  const map = resourceMap(PIDS.map, PIDS.eml, [PIDS.csv, PIDS.pdf, PIDS.restricted]);
  await client.create(PIDS.eml, EML, sysmeta(PIDS.eml, EML, { formatId: EML_FORMAT, fileName: 'toolik_soil_metadata.xml', seriesId: 'doi:10.18739/A2KW57K2P' }));
  await client.create(PIDS.csv, data, sysmeta(PIDS.csv, data, { formatId: 'text/csv', fileName: 'toolik_soil_2016_2019.csv' }));
  await client.create(PIDS.pdf, pdf, sysmeta(PIDS.pdf, pdf, { formatId: 'application/pdf', fileName: 'calibration notes.pdf', checksum: { algorithm: 'SHA-256', value: createHash('sha256').update(pdf).digest('hex') } }));
  await client.create(PIDS.restricted, restricted, sysmeta(PIDS.restricted, restricted, { formatId: 'text/plain', accessPolicy: undefined }));
  await client.create(PIDS.map, map, sysmeta(PIDS.map, Buffer.from(map), { formatId: ORE_FORMAT }));
  return { csv: data, pdf, restricted, map };
}
