import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { ENTITY_LIMITS, readScienceMetadata, ScienceCache, SciencePool } from '../src/index.js';

const EML = 'https://eml.ecoinformatics.org/eml-2.2.0';

const unit = (u: string, scale = 'ratio', kind = 'standardUnit'): string =>
  `<measurementScale><${scale}><unit><${kind}>${u}</${kind}></unit><numericDomain><numberType>real</numberType></numericDomain></${scale}></measurementScale>`;

// Two dataTables with attributes (units on ratio and interval scales, a custom unit, a label,
// a date without unit), an otherEntity without entityName, one given by <references>, and
// entity-like elements that are not the dataset's entities.
const DATASET = `<?xml version="1.0" encoding="UTF-8"?>
<eml:eml xmlns:eml="https://eml.ecoinformatics.org/eml-2.2.0" packageId="p.1" system="test">
  <dataset>
    <title>Kelp</title>
    <!-- <dataTable><entityName>commented out</entityName></dataTable> -->
    <dataTable id="kelp-canopy">
      <entityName>Kelp canopy   biomass
        by reef</entityName>
      <entityDescription><![CDATA[Biomass & density <per transect>]]></entityDescription>
      <physical>
        <objectName>kelp_canopy.csv</objectName>
        <distribution><online><url function="download">https://cn.dataone.org/cn/v2/resolve/urn%3Auuid%3Akelp</url></online></distribution>
      </physical>
      <attributeList id="kelp-attrs">
        <attribute><attributeName>survey_month</attributeName><attributeDefinition>Month</attributeDefinition><measurementScale><dateTime><formatString>YYYY-MM</formatString></dateTime></measurementScale></attribute>
        <attribute><attributeName>frond_density</attributeName><attributeDefinition>Fronds per m²</attributeDefinition>${unit('numberPerMeterSquared', 'ratio', 'customUnit')}</attribute>
        <attribute><attributeName>canopy_biomass</attributeName><attributeDefinition>Wet biomass</attributeDefinition>${unit('kilogramsPerSquareMeter')}</attribute>
        <attribute><attributeLabel>no name: skipped</attributeLabel></attribute>
      </attributeList>
    </dataTable>
    <dataTable id="temperature">
      <entityName>bottom_temperature.csv</entityName>
      <physical><objectName>bottom_temperature.csv</objectName></physical>
      <attributeList>
        <attribute><attributeName>temp_c</attributeName><attributeLabel>Temperature</attributeLabel><attributeDefinition>Bottom water temperature &amp; more</attributeDefinition>${unit('celsius', 'interval')}</attribute>
      </attributeList>
    </dataTable>
    <dataTable>
      <entityName>Kelp again</entityName>
      <attributeList><references>kelp-attrs</references></attributeList>
    </dataTable>
    <otherEntity id="protocol">
      <physical><objectName>protocol.pdf</objectName></physical>
      <entityType>PDF</entityType>
    </otherEntity>
    <otherEntity><entityDescription>no name at all: skipped</entityDescription><entityType>x</entityType></otherEntity>
    <additionalInfo><section><dataTable><entityName>not an entity of the dataset</entityName></dataTable></section></additionalInfo>
  </dataset>
</eml:eml>`;

describe('EML data entities (ScienceMetadata.entities)', () => {
  it('reads entity kind, id, name, description, objectName, distribution URLs and attributes with units', () => {
    const md = readScienceMetadata(EML, DATASET)!;
    expect(md.entities).toEqual([
      {
        kind: 'dataTable',
        id: 'kelp-canopy',
        name: 'Kelp canopy biomass by reef',
        description: 'Biomass & density <per transect>',
        objectName: 'kelp_canopy.csv',
        urls: ['https://cn.dataone.org/cn/v2/resolve/urn%3Auuid%3Akelp'],
        attributes: [
          { name: 'survey_month', definition: 'Month' },
          { name: 'frond_density', definition: 'Fronds per m²', unit: 'numberPerMeterSquared' },
          { name: 'canopy_biomass', definition: 'Wet biomass', unit: 'kilogramsPerSquareMeter' },
        ],
      },
      {
        kind: 'dataTable',
        id: 'temperature',
        name: 'bottom_temperature.csv',
        objectName: 'bottom_temperature.csv',
        urls: [],
        attributes: [{ name: 'temp_c', label: 'Temperature', definition: 'Bottom water temperature & more', unit: 'celsius' }],
      },
      // attributeList by <references>: the referenced list's attributes.
      { kind: 'dataTable', name: 'Kelp again', urls: [], attributes: [expect.objectContaining({ name: 'survey_month' }), expect.objectContaining({ name: 'frond_density' }), expect.objectContaining({ name: 'canopy_biomass' })] },
      // No entityName: named by its objectName.
      { kind: 'otherEntity', id: 'protocol', name: 'protocol.pdf', objectName: 'protocol.pdf', urls: [], attributes: [] },
    ]);
  });

  it('the existing EML 2.2.0 fixture: one dataTable, a dateTime attribute without unit; no entities means no field', () => {
    const md = readScienceMetadata(EML, readFileSync(new URL('./fixtures/eml-2.2.0.xml', import.meta.url)))!;
    expect(md.entities).toEqual([
      { kind: 'dataTable', id: 'soil-temp', name: 'toolik_soil_2016_2019.csv', objectName: 'toolik_soil_2016_2019.csv', urls: [], attributes: [{ name: 'timestamp', definition: 'UTC time' }] },
    ]);
    const none = readScienceMetadata(EML, '<eml><dataset><title>t</title></dataset></eml>')!;
    expect(none.title).toBe('t');
    expect('entities' in none).toBe(false);
  });

  it('bounds what one document gives: 500 entities, 300 attributes each, 10 URLs, 2,000 characters a field', () => {
    expect(ENTITY_LIMITS).toMatchObject({ entities: 500, attributes: 300, textChars: 2000 });
    const long = 'x'.repeat(5000);
    const attrs = Array.from({ length: 350 }, (_, i) => `<attribute><attributeName>v${i}</attributeName><attributeDefinition>${long}</attributeDefinition></attribute>`).join('');
    const urls = Array.from({ length: 15 }, (_, i) => `<distribution><online><url>https://x.org/${i}</url></online></distribution>`).join('');
    const wide = `<dataTable id="${long}"><entityName>${long}</entityName><entityDescription>${long}</entityDescription><physical><objectName>${long}</objectName>${urls}</physical><attributeList>${attrs}</attributeList></dataTable>`;
    const many = Array.from({ length: 600 }, (_, i) => `<otherEntity><entityName>e${i}</entityName><entityType>x</entityType></otherEntity>`).join('');
    const md = readScienceMetadata(EML, `<eml:eml xmlns:eml="${EML}"><dataset><title>t</title>${wide}${many}</dataset></eml:eml>`)!;
    const entities = md.entities!;
    expect(entities).toHaveLength(500);
    expect(entities[499]!.name).toBe('e498');
    const first = entities[0]!;
    expect(first.attributes).toHaveLength(300);
    expect(first.attributes[299]!.name).toBe('v299');
    expect(first.urls).toHaveLength(10);
    for (const s of [first.id, first.name, first.description, first.objectName, first.attributes[0]!.definition]) expect(s).toHaveLength(2000);
  });

  describe('through ScienceCache', () => {
    const pool = new SciencePool({ threads: 1 });
    afterAll(() => pool.close());

    it('entities are read in the worker and reach the caller with the metadata', async () => {
      const cache = new ScienceCache({ objects: async () => Buffer.from(DATASET), pool });
      const md = await cache.metadata({ pid: 'eml', formatId: EML, serialVersion: 1 });
      expect(md?.entities?.map((e) => [e.kind, e.name, e.attributes.length])).toEqual([
        ['dataTable', 'Kelp canopy biomass by reef', 3],
        ['dataTable', 'bottom_temperature.csv', 1],
        ['dataTable', 'Kelp again', 3],
        ['otherEntity', 'protocol.pdf', 0],
      ]);
    });
  });
});
