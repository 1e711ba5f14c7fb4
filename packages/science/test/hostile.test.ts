import { describe, expect, it } from 'vitest';
import { DEFAULT_BUDGETS, plainText, readResourceMapResult, readScienceMetadata, readScienceMetadataResult, scanDocument } from '../src/index.js';
import { mapOf, type Triple } from '../src/ore.js';
import { commentFloodEml, deepMap, keywordFloodEml, linkFloodMap } from './hostile.js';

const EML = 'https://eml.ecoinformatics.org/eml-2.2.0';

/**
 * Runs `fn`, returns its result and the CPU time this process spent (ms): unlike wall time,
 * not inflated by whatever else runs on the machine, so the bounds can be tight enough that
 * a quadratic algorithm fails them (each would take tens of seconds) and a linear one never does.
 */
async function timed<T>(fn: () => T | Promise<T>): Promise<[T, number]> {
  const c0 = process.cpuUsage();
  const r = await fn();
  const c = process.cpuUsage(c0);
  return [r, (c.user + c.system) / 1000];
}

describe('budgets: refused by the linear pre-scan before any parser sees the document', () => {
  it('a 280 KB map nested 40,000 deep and a 1.9 MB map nested 32,000 deep, in milliseconds', async () => {
    for (const [depth, bytes] of [
      [40_000, 280_000],
      [32_000, 1_900_000],
    ] as const) {
      const xml = deepMap(depth, bytes);
      expect(xml.length).toBeGreaterThan(bytes * 0.9);
      const [r, ms] = await timed(() => readResourceMapResult(Buffer.from(xml)));
      expect(r).toEqual({ status: 'not-indexed', reason: 'elements nested more than 256 deep' });
      expect(ms).toBeLessThan(300);
    }
  });

  it('each budget names what was exceeded; the same documents within budgets are read', async () => {
    const eml = keywordFloodEml(1000);
    expect(readScienceMetadataResult(EML, eml, { budgets: { maxElements: 500 } })).toEqual({ status: 'not-indexed', reason: 'more than 500 elements' });
    expect(readScienceMetadataResult(EML, eml, { budgets: { maxTextChars: 100 } })).toEqual({ status: 'not-indexed', reason: 'more than 100 characters of text' });
    expect(readScienceMetadataResult(EML, eml, { budgets: { maxAttributes: 1 } })).toEqual({ status: 'not-indexed', reason: 'more than 1 attributes' });
    expect(readScienceMetadataResult(EML, eml, { maxBytes: 1000 })).toEqual({ status: 'not-indexed', reason: 'larger than 1000 bytes' });
    expect(await readResourceMapResult(linkFloodMap(100), { budgets: { maxLinks: 150 } })).toEqual({ status: 'not-indexed', reason: 'more than 150 links' });
    expect((await readResourceMapResult(linkFloodMap(100))).status).toBe('read');
    expect(readScienceMetadataResult(EML, eml).status).toBe('read');
    expect(DEFAULT_BUDGETS.maxDepth).toBe(256);
  });

  it('the pre-scan is linear on constructs that make naive scanners quadratic', async () => {
    const b = DEFAULT_BUDGETS;
    for (const xml of [`<a>${'<!--'.repeat(200_000)}`, `<a b="${'<'.repeat(1_000_000)}`, `<a>${'<![CDATA['.repeat(100_000)}`, `<r>${'<a x="1" '.repeat(100_000)}</r>`]) {
      const [r, ms] = await timed(() => scanDocument(xml, b));
      expect(r.ok).toBe(false);
      expect(ms).toBeLessThan(500);
    }
  });
});

describe('linear readers on hostile sizes (issue #15)', () => {
  it('800 KB of "<!--" in a CDATA abstract: read, and its plain text extracted, in linear time', async () => {
    const xml = commentFloodEml(200_000);
    expect(xml.length).toBeGreaterThan(800_000);
    const [[r, text], ms] = await timed(() => [readScienceMetadataResult(EML, xml, { withText: true }), plainText(xml)] as const);
    expect(ms).toBeLessThan(2000);
    expect(r.status).toBe('read');
    if (r.status !== 'read') return;
    expect(r.value.title).toBe('Hostile');
    expect(r.value.abstract!.startsWith('start <!--<!--')).toBe(true);
    expect(r.value.abstract!.endsWith('<!-- end')).toBe(true);
    expect(r.text).toBe(text);
    expect(text.length).toBe('Hostile start '.length + 800_000 + ' end'.length);
  });

  it('120,000 keywords: deduplicated in linear time, order kept', async () => {
    const [md, ms] = await timed(() => readScienceMetadata(EML, keywordFloodEml(120_000)));
    // Linear: about 1 s (the former Array.includes took 20 s).
    expect(ms).toBeLessThan(3000);
    expect(md!.keywords).toHaveLength(120_000);
    expect(md!.keywords[0]).toBe('kw0');
    expect(md!.keywords.at(-1)).toBe('kw119999');
  });

  it('60,000 cito:documents links: members and relations deduplicated in linear time', async () => {
    const [r, ms] = await timed(() => readResourceMapResult(linkFloodMap(60_000)));
    // Most of this is the RDF/XML parser (linear, ~2 s for 180,000 statements).
    expect(ms).toBeLessThan(8000);
    expect(r.status).toBe('read');
    if (r.status !== 'read') return;
    expect(r.value.aggregated).toHaveLength(60_001);
    // Each pair is stated twice (documents and isDocumentedBy): kept once.
    expect(r.value.documents).toHaveLength(60_000);
    expect(r.value.documents[59_999]).toEqual({ metadata: 'meta', data: 'd59999' });
    expect(r.value.resourceMap).toBe('map');
  });

  it('the map reader deduplicates 50,000 members and relations stated twice each, in linear time', async () => {
    const R = 'https://cn.dataone.org/cn/v2/resolve/';
    const triples: Triple[] = [{ s: `${R}m#agg`, p: 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type', o: 'http://www.openarchives.org/ore/terms/Aggregation', literal: false }];
    for (let i = 0; i < 50_000; i++) {
      for (const _ of [1, 2]) {
        triples.push({ s: `${R}m#agg`, p: 'http://www.openarchives.org/ore/terms/aggregates', o: `${R}d${i}`, literal: false });
        triples.push({ s: `${R}meta`, p: 'http://purl.org/spar/cito/documents', o: `${R}d${i}`, literal: false });
        triples.push({ s: `${R}d${i}`, p: 'http://purl.org/spar/cito/isDocumentedBy', o: `${R}meta`, literal: false });
      }
    }
    const [map, ms] = await timed(() => mapOf(triples)!);
    // ~1 s; the former Array.includes / Array.some took well over 10 s here.
    expect(ms).toBeLessThan(3000);
    expect(map.aggregated).toHaveLength(50_000);
    expect(map.documents).toHaveLength(50_000);
    expect(map.documents[49_999]).toEqual({ metadata: 'meta', data: 'd49999' });
  });

  it('a long URL run of trailing dots and a resolve URI repeated thousands of times stay linear', async () => {
    const rights = `<intellectualRights><para>see http://x.org/${'.'.repeat(200_000)}a</para></intellectualRights>`;
    const [md, ms] = await timed(() => readScienceMetadata(EML, `<eml:eml xmlns:eml="${EML}"><dataset><title>t</title>${rights}</dataset></eml:eml>`));
    expect(ms).toBeLessThan(2000);
    expect(md!.license!.url!.endsWith('.a')).toBe(true);
    const uri = `https://cn.dataone.org${'/cn/v2/resolve/x'.repeat(20_000)}#`;
    const map = `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ore="http://www.openarchives.org/ore/terms/"><rdf:Description rdf:about="https://cn.dataone.org/cn/v2/resolve/m#aggregation"><ore:aggregates rdf:resource="${uri}"/></rdf:Description></rdf:RDF>`;
    const [r, ms2] = await timed(() => readResourceMapResult(map));
    expect(ms2).toBeLessThan(2000);
    expect(r).toMatchObject({ status: 'read', value: { aggregated: [uri] } });
  });
});
