import { describe, expect, it } from 'vitest';
import { folderDataset, readResourceMap, writeDatasetMap } from '../src/index.js';

const EML = 'https://eml.ecoinformatics.org/eml-2.2.0';

describe('datasets from folders', () => {
  it('a folder with one metadata document and data files beside it is a dataset (subfolders and maps aside)', () => {
    const files = [
      { path: 'kelp/eml.xml', pid: 'kelp/eml.xml', formatId: EML },
      { path: 'kelp/b.csv', pid: 'kelp/b.csv', formatId: 'text/csv' },
      { path: 'kelp/a.csv', pid: 'kelp/a.csv', formatId: 'text/csv' },
      { path: 'kelp/old-map.rdf', pid: 'kelp/old-map.rdf', formatId: 'http://www.openarchives.org/ore/terms' },
      { path: 'kelp/raw/c.csv', pid: 'kelp/raw/c.csv', formatId: 'text/csv' },
    ];
    expect(folderDataset('kelp', files)).toEqual({ folder: 'kelp', metadata: 'kelp/eml.xml', data: ['kelp/a.csv', 'kelp/b.csv'] });
    expect(folderDataset('kelp/raw', files)).toBeUndefined();
  });

  it('two metadata documents, or none, or no data file: no dataset', () => {
    const csv = { path: 'a.csv', pid: 'a.csv', formatId: 'text/csv' };
    expect(folderDataset('', [csv])).toBeUndefined();
    expect(folderDataset('', [{ path: 'e.xml', pid: 'e.xml', formatId: EML }])).toBeUndefined();
    expect(folderDataset('', [csv, { path: 'e.xml', pid: 'e.xml', formatId: EML }, { path: 'i.xml', pid: 'i.xml', formatId: 'http://www.isotc211.org/2005/gmd' }])).toBeUndefined();
  });

  it('writes a map the reader takes back: members, cito relations, its own identifier; same input, same bytes', async () => {
    const input = { mapPid: 'pre:kelp/.dataset-map.v1', metadata: 'pre:kelp/eml & notes.xml', data: ['pre:kelp/a.csv', 'pre:kelp/b%20c.csv'] };
    const xml = writeDatasetMap(input);
    expect(writeDatasetMap(input)).toBe(xml);
    const map = await readResourceMap(xml);
    expect(map?.resourceMap).toBe(input.mapPid);
    expect(new Set(map?.aggregated)).toEqual(new Set([input.metadata, ...input.data]));
    expect(map?.documents).toEqual(expect.arrayContaining(input.data.map((d) => ({ metadata: input.metadata, data: d }))));
    expect(map?.documents).toHaveLength(2);
  });
});
