import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemberNodeClient } from '@memberkit/client';
import { startViewsNode, sysmeta, type ViewsNode } from './support/node.js';
import { EML, EML_FORMAT, ORE_FORMAT } from './support/dataset.js';

const LINKS = 60_000;
const HELD = 120;
const R = 'https://cn.dataone.org/cn/v2/resolve/';

/** A map aggregating LINKS members, each documented by one EML (LINKS cito:documents links). */
function floodMap(mapPid: string, emlPid: string): string {
  const parts = [
    `<?xml version="1.0" encoding="UTF-8"?>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ore="http://www.openarchives.org/ore/terms/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:cito="http://purl.org/spar/cito/">`,
    `<rdf:Description rdf:about="${R}${mapPid}"><rdf:type rdf:resource="http://www.openarchives.org/ore/terms/ResourceMap"/><ore:describes rdf:resource="${R}${mapPid}#aggregation"/></rdf:Description>`,
    `<rdf:Description rdf:about="${R}${mapPid}#aggregation"><rdf:type rdf:resource="http://www.openarchives.org/ore/terms/Aggregation"/><ore:aggregates rdf:resource="${R}${emlPid}"/>`,
  ];
  for (let i = 0; i < LINKS; i++) parts.push(`<ore:aggregates rdf:resource="${R}m${i}"/>`);
  parts.push(`</rdf:Description><rdf:Description rdf:about="${R}${emlPid}">`);
  for (let i = 0; i < LINKS; i++) parts.push(`<cito:documents rdf:resource="${R}m${i}"/>`);
  parts.push('</rdf:Description></rdf:RDF>\n');
  return parts.join('\n');
}

describe(`a map of ${LINKS} cito:documents links: anonymous views are bounded, then cached`, () => {
  let node: ViewsNode;
  let client: MemberNodeClient;
  const timed = async (path: string): Promise<{ ms: number; body: string; res: Response }> => {
    const t = performance.now();
    const res = await fetch(`${node.baseUrl}${path}`);
    const body = await res.text();
    return { ms: performance.now() - t, body, res };
  };

  beforeAll(async () => {
    node = await startViewsNode();
    client = new MemberNodeClient({ baseUrl: node.baseUrl, token: node.tokens.writer });
    await client.create('flood-eml', EML, sysmeta('flood-eml', EML, { formatId: EML_FORMAT }));
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < HELD) {
          const i = next++;
          const b = Buffer.from(`i,v\n${i},1\n`);
          await client.create(`m${i}`, b, sysmeta(`m${i}`, b, { formatId: 'text/csv', fileName: `part-${i}.csv` }));
        }
      }),
    );
    const map = floodMap('flood-map', 'flood-eml');
    await client.create('flood-map', map, sysmeta('flood-map', Buffer.from(map), { formatId: ORE_FORMAT }));
  }, 120_000);
  afterAll(async () => node?.stop());

  it('first view bounded (node keeps answering), second view well under a second, members paged', async () => {
    // Ping while the first view is computed: the node must not freeze.
    let worstPing = 0;
    let pinging = true;
    const pinger = (async () => {
      while (pinging) {
        const t = performance.now();
        await (await fetch(`${node.baseUrl}/v2/monitor/ping`)).arrayBuffer();
        worstPing = Math.max(worstPing, performance.now() - t);
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    const first = await timed('/v2/views/default/flood-map');
    pinging = false;
    await pinger;
    expect(first.res.status).toBe(200);
    const second = await timed('/v2/views/default/flood-map');
    const member = await timed('/v2/views/default/m5');
    const jsonld = await timed('/v2/views/jsonld/flood-map');
    const jsonld2 = await timed('/v2/views/jsonld/flood-map');
    console.log(
      `map of ${LINKS} links: first view ${first.ms.toFixed(0)} ms (${(first.body.length / 1024).toFixed(0)} KiB), second ${second.ms.toFixed(0)} ms, member page ${member.ms.toFixed(0)} ms, JSON-LD ${jsonld.ms.toFixed(0)} / ${jsonld2.ms.toFixed(0)} ms, worst ping during first view ${worstPing.toFixed(0)} ms`,
    );
    expect(first.ms).toBeLessThan(30_000);
    expect(second.ms).toBeLessThan(500);
    expect(jsonld2.ms).toBeLessThan(500);
    expect(worstPing).toBeLessThan(1_500);
    expect(second.body).toBe(first.body);
    // One page of members, with the totals and a link to the next page.
    const rows = first.body.match(/<tr class="restricted">|<tr><td class="name"><a /g) ?? [];
    expect(rows).toHaveLength(100);
    expect(first.body.length).toBeLessThan(200 * 1024);
    expect(first.body).toContain(`of ${LINKS + 1} files`);
    expect(first.body).toContain(`Download all files (zip)<small>${HELD + 1} files`);
    expect(first.body).toContain('?start=100#files');
    const page2 = await timed('/v2/views/default/flood-map?start=100');
    expect(page2.body).toContain('download="part-99.csv"');
    expect(page2.body).not.toContain('download="part-98.csv"');
    expect(page2.body).toContain('?start=200#files');
    // The member's page: described by the EML through the map.
    expect(member.body).toContain('Soil temperature and moisture at Toolik Field Station');
    const ld = JSON.parse(jsonld.body) as { distribution: unknown[] };
    expect(ld.distribution).toHaveLength(HELD + 1);
  }, 120_000);

  it('a change to a member shows at once (the cached page is dropped)', async () => {
    const before = await timed('/v2/views/default/flood-map');
    expect(before.body).toContain('download="part-3.csv"');
    const sm = await client.getSystemMetadata('m3');
    const { accessPolicy: _, ...rest } = sm;
    await client.updateSystemMetadata('m3', rest);
    const after = await timed('/v2/views/default/flood-map');
    expect(after.body).not.toContain('download="part-3.csv"');
    expect(after.body).toContain(`Download all files (zip)<small>${HELD} files`);
  }, 60_000);
});
