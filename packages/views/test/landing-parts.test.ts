import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { humanDate, humanRange } from '../src/dates.js';
import { matchEntities } from '../src/entities.js';
import { coverageMap, viewOf, WIDTH, HEIGHT } from '../src/map/coverage-map.js';
import { citationOf, doiUrl, resolveUrl } from '../src/landing.js';
import { readScienceMetadata, type ScienceMetadata } from '@memberkit/science';

const emptyMetadata = (formatId: string): ScienceMetadata => ({ formatId, creators: [], keywords: [], temporal: [], spatial: [], alternateIdentifiers: [] });

const KELP_XML = readFileSync(new URL('./fixtures/kelp-eml-2.2.0.xml', import.meta.url), 'utf8');
/** The kelp dataset's entities as the science reader gives them (in production, in its worker pool). */
const kelpEntities = () => readScienceMetadata('https://eml.ecoinformatics.org/eml-2.2.0', KELP_XML)!.entities!;

describe('coverage map', () => {
  it('zooms to a regional box, draws it as a rectangle and a point as a marker, over land from world-atlas', () => {
    const m = coverageMap([
      { west: -120.55, east: -119.45, north: 34.48, south: 34.0 },
      { west: -119.9513, east: -119.9513, north: 34.4221, south: 34.4221 },
    ]);
    expect(m.viewBox).toBe(`0 0 ${WIDTH} ${HEIGHT}`);
    expect(m.boxes).toHaveLength(1);
    expect(m.points).toHaveLength(1);
    const box = m.boxes[0]!;
    // The box is inside the frame, not a speck, and the marker sits inside the box.
    expect(box.x).toBeGreaterThan(0);
    expect(box.x + box.width).toBeLessThan(WIDTH);
    expect(box.width).toBeGreaterThan(40);
    expect(m.points[0]!.cx).toBeGreaterThan(box.x);
    expect(m.points[0]!.cx).toBeLessThan(box.x + box.width);
    // California's coast is drawn: a real outline, small enough to inline.
    expect(m.land).toMatch(/^M-?\d+ -?\d+l/);
    expect(m.land.length).toBeGreaterThan(500);
    expect(m.land.length).toBeLessThan(8_000);
    expect(m.extent).toMatch(/°W to .*°W, .*°N to .*°N/);
  });

  it('the world at world scale stays a few KB; a field site becomes a marker', () => {
    const world = coverageMap([{ west: -180, east: 180, north: 90, south: -90 }]);
    expect(world.land.length).toBeLessThan(12_000);
    expect(world.boxes).toHaveLength(1);
    const site = coverageMap([{ west: -149.6, east: -149.5, north: 68.65, south: 68.61 }]);
    expect(site.boxes).toHaveLength(0);
    expect(site.points).toHaveLength(1);
    expect(site.points[0]).toMatchObject({ cx: WIDTH / 2 });
  });

  it('a box across the antimeridian is one rectangle with land on both sides (Fiji, New Zealand)', () => {
    const v = viewOf([{ west: 170, east: -170, north: -10, south: -45 }]);
    expect(v.west).toBeLessThan(170);
    expect(v.west + WIDTH / v.scale).toBeGreaterThan(190);
    const m = coverageMap([{ west: 170, east: -170, north: -10, south: -45 }]);
    expect(m.boxes).toHaveLength(1);
    expect(m.boxes[0]!.width).toBeGreaterThan(50);
    expect(m.land.split('M').length).toBeGreaterThan(3);
  });

  it('the frame stays between the poles and inside -180..180 for coverage that does not cross', () => {
    const v = viewOf([{ west: -179, east: -170, north: 89, south: 80 }]);
    expect(v.north).toBeLessThanOrEqual(90);
    expect(v.west).toBeGreaterThanOrEqual(-180);
    const none = coverageMap([{ west: Number.NaN, east: 1, north: 1, south: 0 }]);
    expect(none.boxes).toHaveLength(0);
  });
});

describe('human dates', () => {
  it('full, partial and timestamped ISO dates read as people write them, with a machine value', () => {
    expect(humanDate('2024-03-12')).toEqual({ text: '12 March 2024', machine: '2024-03-12' });
    expect(humanDate('2016-06')).toEqual({ text: 'June 2016', machine: '2016-06' });
    expect(humanDate('2016')).toEqual({ text: '2016', machine: '2016' });
    expect(humanDate('2024-03-12T09:30:00Z')).toEqual({ text: '12 March 2024', machine: '2024-03-12T09:30:00Z' });
    expect(humanDate(new Date('2020-01-05T23:00:00Z'))).toEqual({ text: '5 January 2020', machine: '2020-01-05T23:00:00.000Z' });
    // Not a date: as written, no machine value.
    expect(humanDate('Summer 1998')).toEqual({ text: 'Summer 1998' });
    expect(humanDate('2023-02-30')).toEqual({ text: '2023-02-30' });
    expect(humanRange('2016-06-01', '2019-08-31')).toBe('1 June 2016 to 31 August 2019');
    expect(humanRange('2016-06-01', undefined)).toBe('from 1 June 2016');
  });
});

describe('EML entities', () => {
  it('the science reader gives the landing page entity names, descriptions, object names, URLs and attributes with units', () => {
    const entities = kelpEntities();
    expect(entities.map((e) => [e.kind, e.name, e.objectName])).toEqual([
      ['dataTable', 'Kelp canopy biomass by reef and month', 'kelp_canopy_biomass_2019_2023.csv'],
      ['dataTable', 'bottom_temperature_hourly.csv', 'bottom_temperature_hourly.csv'],
      ['otherEntity', 'Diver survey protocol', 'survey_protocol_v3.2.pdf'],
      ['otherEntity', 'Reef site photographs', undefined],
    ]);
    expect(entities[0]!.description).toMatch(/^Giant kelp canopy biomass and frond density per transect/);
    expect(entities[0]!.attributes.map((a) => a.name)).toEqual(['survey_month', 'site', 'transect', 'frond_density', 'canopy_biomass']);
    expect(entities[0]!.attributes[4]).toEqual({ name: 'canopy_biomass', definition: 'Wet canopy biomass estimated from frond counts', unit: 'kilogramsPerSquareMeter' });
    expect(entities[1]!.attributes[2]).toEqual({ name: 'temp_c', label: 'Temperature', definition: 'Bottom water temperature', unit: 'celsius' });
    expect(entities[0]!.urls).toEqual(['https://cn.dataone.org/cn/v2/resolve/urn%3Auuid%3Ab7d4c1e2-kelp-canopy']);
  });

  it('matches files by resolve URL, objectName, then entityName; leaves the rest unmatched', () => {
    const entities = kelpEntities();
    const { byPid, unmatched } = matchEntities(entities, [
      { pid: 'urn:uuid:b7d4c1e2-kelp-canopy', name: 'canopy.csv' },
      { pid: 'temp', name: 'bottom_temperature_hourly.csv' },
      { pid: 'p', name: 'survey_protocol_v3.2.pdf' },
    ]);
    expect(byPid.get('urn:uuid:b7d4c1e2-kelp-canopy')?.name).toBe('Kelp canopy biomass by reef and month');
    expect(byPid.get('temp')?.kind).toBe('dataTable');
    expect(byPid.get('p')?.name).toBe('Diver survey protocol');
    expect(unmatched.map((e) => e.name)).toEqual(['Reef site photographs']);
  });
});

describe('citation link', () => {
  it('a DOI as https://doi.org/, else the federation resolve URL when registered and synchronised, else the node', () => {
    const md = { ...emptyMetadata('x'), alternateIdentifiers: ['doi:10.18739/A2KW57K2P'] };
    expect(doiUrl(md)).toBe('https://doi.org/10.18739/A2KW57K2P');
    expect(doiUrl({ ...md, alternateIdentifiers: ['https://dx.doi.org/10.5063/F1XYZ'] })).toBe('https://doi.org/10.5063/F1XYZ');
    expect(doiUrl(emptyMetadata('x'))).toBeUndefined();
    expect(resolveUrl('urn:uuid:1 2', { api: 'https://mn.example.org/mn/v2' })).toBe('https://mn.example.org/mn/v2/object/urn%3Auuid%3A1%202');
    expect(resolveUrl('urn:uuid:1', { api: 'https://mn.example.org/mn/v2', federation: 'https://cn.dataone.org/cn/' })).toBe('https://cn.dataone.org/cn/v2/resolve/urn%3Auuid%3A1');
    expect(resolveUrl('p', { api: 'https://mn/v2', federation: 'javascript:alert(1)' })).toBe('https://mn/v2/object/p');
    expect(citationOf(undefined, 'T', 'https://mn/v2/object/p', '2020', 'My Node')).toBe('(2020). T. My Node. https://mn/v2/object/p');
  });
});
