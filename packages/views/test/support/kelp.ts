import { readFileSync } from 'node:fs';
import { MemberNodeClient } from '@memberkit/client';
import { resourceMap, sysmeta, type ViewsNode } from './node.js';
import { EML_FORMAT, ORE_FORMAT } from './dataset.js';

/** An EML 2.2 dataset written for these tests: entities with descriptions and attribute lists, a box and a point, no DOI. */
export const KELP_EML = readFileSync(new URL('../fixtures/kelp-eml-2.2.0.xml', import.meta.url));
export const KELP_TITLE = 'Giant kelp canopy biomass and bottom temperature at nine reefs in the Santa Barbara Channel, California, 2019–2023';

export const KELP = {
  eml: 'urn:uuid:b7d4c1e2-kelp-eml',
  canopy: 'urn:uuid:b7d4c1e2-kelp-canopy',
  temperature: 'kelp/bottom_temperature_hourly.csv',
  protocol: 'urn:uuid:b7d4c1e2-kelp-protocol',
  map: 'resource_map_urn:uuid:b7d4c1e2-kelp',
};

function rows(header: string, n: number, row: (i: number) => string): Buffer {
  return Buffer.from(`${[header, ...Array.from({ length: n }, (_, i) => row(i))].join('\n')}\n`);
}

export async function loadKelpDataset(node: ViewsNode): Promise<void> {
  const client = new MemberNodeClient({ baseUrl: node.baseUrl, token: node.tokens.writer });
  const sites = ['NAPL', 'MOHK', 'CARP', 'AQUE', 'ABUR', 'AHND', 'BULL', 'GOLB', 'IVEE'];
  const canopy = rows('survey_month,site,transect,frond_density,canopy_biomass', 540, (i) => `${2019 + Math.floor(i / 108)}-${String((Math.floor(i / 9) % 12) + 1).padStart(2, '0')},${sites[i % 9]},${(i % 8) + 1},${(4 + Math.sin(i) * 3).toFixed(2)},${(1.2 + Math.cos(i / 7)).toFixed(3)}`);
  const temperature = rows('timestamp,site,temp_c', 2000, (i) => `${new Date(Date.UTC(2019, 0, 7) + i * 3_600_000).toISOString().slice(0, 16)},${sites[i % 9]},${(14 + Math.sin(i / 24) * 2).toFixed(2)}`);
  const protocol = Buffer.concat([Buffer.from('%PDF-1.4\n% survey protocol v3.2\n'), Buffer.alloc(24_000, 32), Buffer.from('\n%%EOF\n')]);
  const map = resourceMap(KELP.map, KELP.eml, [KELP.canopy, KELP.temperature, KELP.protocol]);
  await client.create(KELP.eml, KELP_EML, sysmeta(KELP.eml, KELP_EML, { formatId: EML_FORMAT, fileName: 'kelp_sbc_2019_2023_eml.xml' }));
  await client.create(KELP.canopy, canopy, sysmeta(KELP.canopy, canopy, { formatId: 'text/csv', fileName: 'kelp_canopy_biomass_2019_2023.csv' }));
  await client.create(KELP.temperature, temperature, sysmeta(KELP.temperature, temperature, { formatId: 'text/csv', fileName: 'bottom_temperature_hourly.csv' }));
  await client.create(KELP.protocol, protocol, sysmeta(KELP.protocol, protocol, { formatId: 'application/pdf', fileName: 'survey_protocol_v3.2.pdf' }));
  await client.create(KELP.map, map, sysmeta(KELP.map, Buffer.from(map), { formatId: ORE_FORMAT }));
}
