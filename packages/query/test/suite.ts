import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QueryEngineDescriptionCodec, QueryEngineListCodec, type ObjectRecord } from '@memberkit/types';
import type { QueryExtensionOptions } from '../src/index.js';
import { DATA_FILES, formatIdOf, RECORDS, recordXml, RESOURCE_MAP, resourceMapXml, type RecordSpec } from './corpus.js';
import { ids, solr, startQueryNode, sysmetaFor, type QueryNode } from './node.js';

const C = (s: string) => `corpus.${s}`;
const enc = encodeURIComponent;

/**
 * The MNQuery suite over HTTP against a real node whose query extension uses the index
 * `options()` gives: corpus loading through MNStorage, every syntax element checked for
 * exact result ids, access filtering, archived objects, freshness after each write.
 */
export function querySuite(label: string, options: () => Promise<QueryExtensionOptions>, cleanup: () => Promise<void> = async () => {}): void {
  describe(`MNQuery over HTTP (${label})`, () => {
    let node: QueryNode;
    const PUBLIC_ALL: string[] = [];

    beforeAll(async () => {
      node = await startQueryNode(await options());
      const writer = node.client('writer');
      const create = async (r: RecordSpec, pid = r.pid, spec = r) => {
        const xml = recordXml(spec);
        const access =
          r.access === 'private'
            ? { accessPolicy: undefined }
            : typeof r.access === 'object'
              ? { accessPolicy: { allow: [{ subject: [node.subjects.other], permission: ['read' as const] }] } }
              : {};
        await writer.create(pid, xml, sysmetaFor(pid, xml, formatIdOf(r), node.subjects.writer, access));
      };
      for (const r of RECORDS) await create(r);
      for (const d of DATA_FILES) await writer.create(d.pid, d.content, sysmetaFor(d.pid, d.content, 'text/csv', node.subjects.writer, { fileName: d.fileName }));
      const map = resourceMapXml(RESOURCE_MAP.pid, RESOURCE_MAP.metadata, RESOURCE_MAP.data);
      await writer.create(RESOURCE_MAP.pid, map, sysmetaFor(RESOURCE_MAP.pid, map, 'http://www.openarchives.org/ore/terms', node.subjects.writer));
      // A revised version of the soil record, and an archived forest record.
      const soil = RECORDS.find((r) => r.pid === C('eml-soil'))!;
      const revised = { ...soil, title: `${soil.title} (revised)` };
      const xml = recordXml(revised);
      await writer.update(soil.pid, xml, C('eml-soil.2'), sysmetaFor(C('eml-soil.2'), xml, formatIdOf(soil), node.subjects.writer, { obsoletes: soil.pid }));
      await writer.archive(C('eml-forest'));
      // Content is parsed off the request path (worker threads): wait for it before searching it.
      await node.ext.indexer!.settled();
      PUBLIC_ALL.push(
        ...RECORDS.filter((r) => !r.access && r.pid !== C('eml-forest')).map((r) => r.pid),
        C('eml-soil.2'),
        ...DATA_FILES.map((d) => d.pid),
        RESOURCE_MAP.pid,
      );
      PUBLIC_ALL.sort();
    });

    afterAll(async () => {
      await node?.stop();
      await cleanup();
    });

    it('lists the engines and describes solr (XSD types, v1.1 namespace)', async () => {
      for (const v of ['v1', 'v2']) {
        const res = await fetch(`${node.baseUrl}/${v}/query`);
        expect(res.status).toBe(200);
        const body = await res.text();
        expect(body).toContain('http://ns.dataone.org/service/types/v1.1');
        expect(QueryEngineListCodec.decode(body).queryEngine).toEqual(['solr']);
      }
      const res = await fetch(`${node.baseUrl}/v2/query/solr`);
      expect(res.status).toBe(200);
      const d = QueryEngineDescriptionCodec.decode(await res.text());
      expect(d.name).toBe('solr');
      expect(d.queryEngineVersion).toBeTruthy();
      expect(d.querySchemaVersion).toBeTruthy();
      const names = d.queryField.map((f) => f.name);
      for (const f of ['id', 'seriesId', 'formatId', 'formatType', 'size', 'checksum', 'dateUploaded', 'dateModified', 'rightsHolder', 'obsoletes', 'obsoletedBy', 'archived', 'resourceMap', 'documents', 'isDocumentedBy', 'title', 'abstract', 'origin', 'author', 'keywords', 'beginDate', 'endDate', 'northBoundCoord', 'southBoundCoord', 'eastBoundCoord', 'westBoundCoord', 'text']) {
        expect(names).toContain(f);
      }
      expect(d.queryField.find((f) => f.name === 'keywords')).toMatchObject({ type: 'string', multivalued: true, sortable: false });
      expect(d.queryField.find((f) => f.name === 'dateUploaded')?.description[0]).toBeTruthy();
      const caps = await (await fetch(`${node.baseUrl}/v2/node`)).text();
      expect(caps).toMatch(/<service name="MNQuery" version="v1" available="true"/);
      expect(caps).toMatch(/<service name="MNQuery" version="v2" available="true"/);
    });

    it('answers NotFound for an unknown engine (2814 describe, 2825 query)', async () => {
      const d = await fetch(`${node.baseUrl}/v2/query/lucene`);
      expect(d.status).toBe(404);
      expect(await d.text()).toMatch(/name="NotFound"[^>]*detailCode="2814"/);
      const q = await fetch(`${node.baseUrl}/v2/query/lucene/?q=*:*`);
      expect(q.status).toBe(404);
      expect(await q.text()).toMatch(/name="NotFound"[^>]*detailCode="2825"/);
    });

    it('*:* finds what the caller may read', async () => {
      expect(await ids(node, 'q=*:*')).toEqual(PUBLIC_ALL);
      expect(await ids(node, 'q=*:*', 'other')).toEqual([...PUBLIC_ALL, C('iso-hurricane')].sort());
      expect(await ids(node, 'q=*:*', 'writer')).toEqual([...PUBLIC_ALL, C('iso-hurricane'), C('eml-plankton')].sort());
      expect(await ids(node, 'q=*:*', 'admin')).toEqual([...PUBLIC_ALL, C('iso-hurricane'), C('eml-plankton')].sort());
      expect((await solr(node, 'q=*:*&rows=0')).response.numFound).toBe(PUBLIC_ALL.length);
    });

    it('field terms, text terms and phrases', async () => {
      expect(await ids(node, 'q=title:kelp')).toEqual([C('eml-kelp')]);
      expect(await ids(node, 'q=title:KELP')).toEqual([C('eml-kelp')]);
      expect(await ids(node, `q=${enc('title:"sea surface"')}`)).toEqual([C('iso-salinity'), C('iso-sst')]);
      expect(await ids(node, `q=${enc('title:"surface sea"')}`)).toEqual([]);
      expect(await ids(node, `q=${enc('keywords:"soil moisture"')}`)).toEqual([C('eml-soil'), C('eml-soil.2')]);
      expect(await ids(node, 'q=keywords:arctic')).toEqual([C('eml-soil'), C('eml-soil.2'), C('iso-seaice')]);
      expect(await ids(node, 'q=keywords:Arctic')).toEqual([]);
      expect(await ids(node, `q=${enc('formatId:"http://www.isotc211.org/2005/gmd"')}`)).toEqual([C('iso-bathymetry'), C('iso-glacier'), C('iso-salinity'), C('iso-seaice'), C('iso-sst')]);
      expect(await ids(node, `q=${enc('id:corpus.kelp_cover.csv')}`)).toEqual([C('kelp_cover.csv')]);
      expect(await ids(node, `q=${enc('origin:"Leila Haddad"')}`)).toEqual([C('iso-salinity')]);
      expect(await ids(node, `q=${enc('author:"Daniel Reedman"')}`)).toEqual([C('eml-kelp')]);
      expect(await ids(node, 'q=formatType:DATA')).toEqual([C('kelp_cover.csv'), C('penguin_counts.csv')]);
    });

    it('default field (text): science metadata full text, names, diacritics folded', async () => {
      expect(await ids(node, 'q=penguins')).toEqual([C('eml-penguins')]);
      expect(await ids(node, 'q=Haddad')).toEqual([C('iso-salinity')]);
      expect(await ids(node, 'q=helene')).toEqual([C('eml-coral')]);
      expect(await ids(node, `q=${enc('Hélène')}`)).toEqual([C('eml-coral')]);
      expect(await ids(node, 'q=calibration')).toEqual(RECORDS.filter((r) => r.kind !== 'iso' && !r.access && r.pid !== C('eml-forest')).map((r) => r.pid).concat(C('eml-soil.2')).sort());
      expect(await ids(node, `q=${enc('"Palmer Station"')}`)).toEqual([C('eml-penguins')]);
    });

    it('wildcards on text and string fields', async () => {
      expect(await ids(node, `q=${enc('title:glaci*')}`)).toEqual([C('iso-glacier')]);
      expect(await ids(node, `q=${enc('title:*ake*')}`)).toEqual([C('eml-lakeice'), C('eml-soil'), C('eml-soil.2')]);
      expect(await ids(node, `q=${enc('id:corpus.iso-s*')}`)).toEqual([C('iso-salinity'), C('iso-seaice'), C('iso-sst')]);
      expect(await ids(node, `q=${enc('id:corpus.eml-bird?')}`)).toEqual([C('eml-birds')]);
      expect(await ids(node, `q=${enc('formatId:*isotc211*')}`)).toHaveLength(5);
      expect(await ids(node, `q=${enc('fileName:*.csv')}`)).toEqual([C('kelp_cover.csv'), C('penguin_counts.csv')]);
    });

    it('ranges on dates (with NOW math) and numbers', async () => {
      expect(await ids(node, `q=${enc('beginDate:[2000-01-01T00:00:00Z TO *]')}`)).toEqual(
        ['eml-coral', 'eml-kelp', 'eml-soil', 'eml-soil.2', 'iso-bathymetry', 'iso-salinity', 'iso-sst'].map(C),
      );
      expect(await ids(node, `q=${enc('endDate:{* TO 2015-01-01T00:00:00Z}')}`)).toEqual([C('eml-kelp'), C('iso-bathymetry')]);
      expect(await ids(node, `q=${enc('beginDate:[1900-01-01T00:00:00Z TO 1950-01-01T00:00:00Z]')}`)).toEqual([C('iso-glacier')]);
      expect(await ids(node, `q=${enc('northBoundCoord:[* TO 0]')}`)).toEqual([C('eml-coral'), C('eml-penguins')]);
      expect(await ids(node, `q=${enc('westBoundCoord:[-180 TO -120]')}`)).toEqual(['eml-coral', 'eml-kelp', 'eml-soil', 'eml-soil.2', 'iso-bathymetry', 'iso-seaice', 'iso-sst'].map(C));
      expect(await ids(node, `q=${enc('westBoundCoord:{-180 TO -120]')}`)).toEqual(['eml-coral', 'eml-kelp', 'eml-soil', 'eml-soil.2', 'iso-bathymetry', 'iso-sst'].map(C));
      expect(await ids(node, `q=${enc('size:[* TO 500]')}`)).toEqual([C('kelp_cover.csv'), C('penguin_counts.csv')]);
      expect(await ids(node, `q=${enc('dateUploaded:[NOW-1HOUR TO NOW+1MINUTE]')}`)).toEqual(PUBLIC_ALL);
      expect(await ids(node, `q=${enc('dateUploaded:[* TO NOW-1DAY]')}`)).toEqual([]);
      expect(await ids(node, `q=${enc('dateModified:[NOW/DAY-1DAY TO *]')}`)).toEqual(PUBLIC_ALL);
    });

    it('AND, OR, NOT, +, -, groups, -field:* and repeated fq', async () => {
      expect(await ids(node, `q=${enc('title:lake OR title:glacier')}`)).toEqual(['eml-lakeice', 'eml-soil', 'eml-soil.2', 'iso-glacier'].map(C));
      expect(await ids(node, `q=${enc('title:lake AND NOT title:toolik')}`)).toEqual([C('eml-lakeice')]);
      expect(await ids(node, `q=${enc('(title:sea OR title:ocean) AND -keywords:BUOYS')}`)).toEqual([C('iso-salinity'), C('iso-seaice')]);
      expect(await ids(node, `q=${enc('+title:sea -title:ice')}`)).toEqual([C('iso-salinity'), C('iso-sst')]);
      expect(await ids(node, `q=${enc('keywords:(fish OR penguins)')}`)).toEqual([C('eml-coral'), C('eml-penguins')]);
      expect(await ids(node, `q=${enc('-title:*')}`)).toEqual([C('kelp_cover.csv'), C('penguin_counts.csv'), RESOURCE_MAP.pid]);
      expect(await ids(node, `q=*:*&fq=${enc('-obsoletedBy:*')}`)).toEqual(PUBLIC_ALL.filter((p) => p !== C('eml-soil')));
      expect(await ids(node, `q=obsoletedBy:*`)).toEqual([C('eml-soil')]);
      expect(await ids(node, `q=${enc('obsoletes:corpus.eml-soil')}`)).toEqual([C('eml-soil.2')]);
      expect(await ids(node, `q=formatType:METADATA&fq=keywords:arctic&fq=${enc('-obsoletedBy:*')}`)).toEqual([C('eml-soil.2'), C('iso-seaice')]);
      expect(await ids(node, `q=${enc('title:lake title:glacier')}&q.op=AND`)).toEqual([]);
    });

    it('sort, start and rows; fl and value types', async () => {
      const sorted = await solr(node, `q=formatType:METADATA&fq=${enc('-obsoletedBy:*')}&sort=${enc('beginDate asc')}&rows=3&fl=id,beginDate`);
      expect(sorted.response.docs.map((d) => d.id)).toEqual(['eml-lakeice', 'iso-glacier', 'eml-stream'].map(C));
      expect(sorted.response.docs[0]?.beginDate).toBe('1855-12-01T00:00:00.000Z');
      const page = await solr(node, `q=formatType:METADATA&fq=${enc('-obsoletedBy:*')}&sort=${enc('beginDate asc')}&start=3&rows=2&fl=id`);
      expect(page.response.start).toBe(3);
      expect(page.response.docs.map((d) => d.id)).toEqual([C('iso-seaice'), C('eml-birds')]);
      const desc = await solr(node, `q=formatType:DATA&sort=${enc('size desc')}&fl=id,size`);
      expect(desc.response.docs.map((d) => d.id)).toEqual(
        [...DATA_FILES].sort((a, b) => b.content.length - a.content.length).map((d) => d.pid),
      );
      const kelp = (await solr(node, `q=${enc('id:corpus.eml-kelp')}&fl=id,title,keywords,size,archived,dateUploaded,northBoundCoord,origin,formatType,isPublic,text`)).response.docs[0]!;
      expect(kelp).toMatchObject({
        id: C('eml-kelp'),
        title: RECORDS[0]!.title,
        keywords: ['kelp forest', 'benthic cover', 'invertebrates'],
        archived: false,
        northBoundCoord: 34.47,
        origin: ['Daniel Reedman'],
        formatType: 'METADATA',
        isPublic: true,
      });
      expect(typeof kelp.size).toBe('number');
      expect(kelp.dateUploaded).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(kelp.text).toBeUndefined();
      const defaultRows = await solr(node, 'q=*:*');
      expect(defaultRows.response.docs).toHaveLength(10);
    });

    it('facets on single- and multi-valued fields', async () => {
      const r = await solr(node, 'q=*:*&rows=0&facet=true&facet.field=formatType');
      expect(r.response.docs).toEqual([]);
      expect(r.facet_counts?.facet_fields.formatType).toEqual(['METADATA', 14, 'DATA', 2, 'RESOURCE', 1]);
      const k = await solr(node, 'q=keywords:arctic&rows=0&facet=true&facet.field=keywords&facet.mincount=1');
      expect(k.facet_counts?.facet_fields.keywords).toEqual(['arctic', 3, 'permafrost', 2, 'soil moisture', 2, 'SEA ICE', 1]);
    });

    it('package relations from the resource map', async () => {
      expect(await ids(node, `q=resourceMap:${enc(RESOURCE_MAP.pid)}`)).toEqual([C('eml-kelp'), C('kelp_cover.csv')]);
      expect(await ids(node, `q=isDocumentedBy:${enc(C('eml-kelp'))}`)).toEqual([C('kelp_cover.csv')]);
      expect(await ids(node, 'q=documents:*')).toEqual([C('eml-kelp')]);
      const doc = (await solr(node, `q=${enc('id:corpus.eml-kelp')}&fl=id,documents,resourceMap`)).response.docs[0];
      expect(doc).toEqual({ id: C('eml-kelp'), documents: [C('kelp_cover.csv')], resourceMap: [RESOURCE_MAP.pid] });
    });

    it('access: a private object is visible to its owner and administrators only', async () => {
      expect(await ids(node, 'q=zooplankton')).toEqual([]);
      expect(await ids(node, 'q=zooplankton', 'other')).toEqual([]);
      expect(await ids(node, 'q=zooplankton', 'writer')).toEqual([C('eml-plankton')]);
      expect(await ids(node, 'q=zooplankton', 'admin')).toEqual([C('eml-plankton')]);
      expect(await ids(node, 'q=Katrina')).toEqual([]);
      expect(await ids(node, 'q=Katrina', 'other')).toEqual([C('iso-hurricane')]);
      expect((await solr(node, 'q=*:*&rows=0&facet=true&facet.field=formatType')).facet_counts?.facet_fields.formatType).not.toContain(16);
    });

    it('archived objects are hidden unless the query names archived', async () => {
      expect(await ids(node, 'q=Douglas')).toEqual([]);
      expect(await ids(node, 'q=Douglas&fq=archived:true')).toEqual([C('eml-forest')]);
      expect(await ids(node, `q=Douglas&fq=${enc('archived:*')}`)).toEqual([C('eml-forest')]);
      expect(await ids(node, 'q=archived:true')).toEqual([C('eml-forest')]);
      expect(await ids(node, 'q=archived:false')).toEqual(PUBLIC_ALL);
    });

    it('answers XML in Solr’s format by default, JSON with wt=json', async () => {
      const res = await fetch(`${node.baseUrl}/v1/query/solr/?q=${enc('id:corpus.eml-kelp')}&fl=id,size,archived,keywords,dateUploaded,northBoundCoord`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/xml/);
      const xml = await res.text();
      expect(xml).toMatch(/<response>/);
      expect(xml).toMatch(/<lst name="responseHeader"><int name="status">0<\/int><int name="QTime">\d+<\/int>/);
      expect(xml).toContain('<result name="response" numFound="1" start="0">');
      expect(xml).toContain(`<str name="id">${C('eml-kelp')}</str>`);
      expect(xml).toMatch(/<long name="size">\d+<\/long>/);
      expect(xml).toContain('<bool name="archived">false</bool>');
      expect(xml).toContain('<arr name="keywords"><str>kelp forest</str><str>benthic cover</str><str>invertebrates</str></arr>');
      expect(xml).toMatch(/<date name="dateUploaded">[0-9T:.-]+Z<\/date>/);
      expect(xml).toContain('<double name="northBoundCoord">34.47</double>');
      const json = await fetch(`${node.baseUrl}/v1/query/solr/?q=*:*&rows=1&wt=json`);
      expect(json.headers.get('content-type')).toMatch(/application\/json/);
      const body = (await json.json()) as { responseHeader: { status: number; params: Record<string, string> }; response: { numFound: number; start: number; docs: unknown[] } };
      expect(body.responseHeader.status).toBe(0);
      expect(body.responseHeader.params).toMatchObject({ q: '*:*', rows: '1', wt: 'json' });
      expect(body.response).toMatchObject({ numFound: PUBLIC_ALL.length, start: 0 });
      expect(body.response.docs).toHaveLength(1);
    });

    it('takes the rest of the URL verbatim: /select?, bare ?, path-only, and POSTed forms', async () => {
      const want = [C('eml-kelp')];
      for (const tail of [`/select?q=title:kelp&fl=id&wt=json`, `?q=title:kelp&fl=id&wt=json`, `/q=title:kelp&fl=id&wt=json`]) {
        const res = await fetch(`${node.baseUrl}/v2/query/solr${tail}`);
        expect(res.status, tail).toBe(200);
        expect(((await res.json()) as { response: { docs: Array<{ id: string }> } }).response.docs.map((d) => d.id), tail).toEqual(want);
      }
      const form = await fetch(`${node.baseUrl}/v2/query/solr`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams([['q', 'title:kelp OR title:glacier'], ['fl', 'id'], ['wt', 'json'], ['sort', 'id asc']]).toString(),
      });
      expect(form.status).toBe(200);
      expect(((await form.json()) as { response: { docs: Array<{ id: string }> } }).response.docs.map((d) => d.id)).toEqual([C('eml-kelp'), C('iso-glacier')]);
      const multipart = new FormData();
      multipart.append('q', 'title:kelp');
      multipart.append('wt', 'json');
      const mp = await fetch(`${node.baseUrl}/v2/query/solr/`, { method: 'POST', body: multipart });
      expect(((await mp.json()) as { response: { numFound: number } }).response.numFound).toBe(1);
    });

    it('rejects bad queries with InvalidRequest 2823 pointing at the problem', async () => {
      const bad = async (query: string) => {
        const res = await fetch(`${node.baseUrl}/v2/query/solr/?${query}`);
        expect(res.status, query).toBe(400);
        const body = await res.text();
        expect(body, query).toMatch(/<error [^>]*name="InvalidRequest"[^>]*detailCode="2823"|<error [^>]*detailCode="2823"[^>]*name="InvalidRequest"/);
        return body;
      };
      expect(await bad(`q=${enc('title:(soil')}`)).toMatch(/missing &apos;\)&apos; at position 6/);
      expect(await bad(`q=${enc('title:"soil')}`)).toMatch(/position 6/);
      expect(await bad(`q=*:*&fq=${enc('size:[1 TO')}`)).toMatch(/position 10/);
      expect(await bad(`q=nosuchfield:x`)).toMatch(/undefined field nosuchfield/);
      expect(await bad(`q=${enc('size:big')}`)).toMatch(/invalid number/);
      expect(await bad(`q=${enc('dateUploaded:[yesterday TO *]')}`)).toMatch(/invalid date/);
      expect(await bad(`q=*:*&rows=-1`)).toMatch(/rows/);
      expect(await bad(`q=*:*&sort=${enc('keywords asc')}`)).toMatch(/not sortable/);
    });

    describe('freshness', () => {
      const fresh = (n: number) => `fresh.${label.replace(/\W+/g, '-')}.${n}`;
      const eml = (title: string): string => recordXml({ ...RECORDS[1]!, pid: 'x', title });
      const fmt = 'https://eml.ecoinformatics.org/eml-2.2.0';

      it('a created object is found by its system metadata as soon as create answers, by its content once parsed off the request path', async () => {
        const xml = eml('Freshwater mussel survey of the Clinch River');
        const t0 = performance.now();
        await node.client('writer').create(fresh(1), xml, sysmetaFor(fresh(1), xml, fmt, node.subjects.writer));
        expect(await ids(node, `q=${enc(`id:"${fresh(1)}"`)}`)).toEqual([fresh(1)]);
        await node.ext.indexer!.settled();
        expect(await ids(node, 'q=mussel')).toEqual([fresh(1)]);
        const ms = performance.now() - t0;
        expect(ms).toBeLessThan(5000);
      });

      it('update: the new version is searchable, the old one has obsoletedBy', async () => {
        const xml = eml('Freshwater mussel survey of the Clinch River and Powell River');
        await node.client('writer').update(fresh(1), xml, fresh(2), sysmetaFor(fresh(2), xml, fmt, node.subjects.writer, { obsoletes: fresh(1) }));
        await node.ext.indexer!.settled();
        expect(await ids(node, 'q=Powell')).toEqual([fresh(2)]);
        expect(await ids(node, `q=mussel&fq=${enc('-obsoletedBy:*')}`)).toEqual([fresh(2)]);
        expect((await solr(node, `q=id:${enc(fresh(1))}&fl=obsoletedBy`)).response.docs).toEqual([{ id: fresh(1), obsoletedBy: fresh(2) }]);
      });

      it('updateSystemMetadata: access changes are reflected', async () => {
        const xml = eml('Private beaver dam inventory');
        await node.client('writer').create(fresh(3), xml, sysmetaFor(fresh(3), xml, fmt, node.subjects.writer, { accessPolicy: undefined }));
        await node.ext.indexer!.settled();
        expect(await ids(node, 'q=beaver')).toEqual([]);
        expect(await ids(node, 'q=beaver', 'writer')).toEqual([fresh(3)]);
        const sm = await node.client('writer').getSystemMetadata(fresh(3));
        await node.client('writer').updateSystemMetadata(fresh(3), { ...sm, accessPolicy: { allow: [{ subject: ['public'], permission: ['read'] }] } });
        // The content parsed before is reused: the access change applies as soon as the call answers.
        expect(await ids(node, 'q=beaver')).toEqual([fresh(3)]);
      });

      it('concurrent creates and an access change: the next query has every one, the private one only for its owner', async () => {
        // Creates do not wait for the index (it follows the change feed in the background, in
        // shared transactions); a query catches up with the feed before it answers.
        const pids = Array.from({ length: 24 }, (_, i) => `${fresh(10)}.${i}`);
        await Promise.all(pids.map((pid) => node.client('writer').create(pid, `a,b\n${pid},1\n`, sysmetaFor(pid, `a,b\n${pid},1\n`, 'text/csv', node.subjects.writer))));
        const hidden = pids[7]!;
        const sm = await node.client('writer').getSystemMetadata(hidden);
        await node.client('writer').updateSystemMetadata(hidden, { ...sm, accessPolicy: undefined });
        const q = `q=${enc(`id:${fresh(10)}.*`)}`;
        expect(await ids(node, q)).toEqual(pids.filter((p) => p !== hidden).sort());
        expect(await ids(node, q, 'writer')).toEqual([...pids].sort());
        // Later tests count the corpus's data objects.
        await Promise.all(pids.map((pid) => node.client('admin').delete(pid)));
        expect(await ids(node, q, 'writer')).toEqual([]);
      });

      it('archive hides, delete removes', async () => {
        await node.client('writer').archive(fresh(2));
        await node.ext.indexer!.settled();
        expect(await ids(node, 'q=mussel')).toEqual([fresh(1)]);
        expect(await ids(node, 'q=mussel&fq=archived:true')).toEqual([fresh(2)]);
        await node.client('admin').delete(fresh(1));
        expect(await ids(node, `q=mussel&fq=${enc('archived:*')}`)).toEqual([fresh(2)]);
      });

      it('changes made by others (another process, a scanner): the change feed, before each query', async () => {
        const pid = fresh(4);
        const now = new Date();
        const record: ObjectRecord = {
          sysmeta: {
            ...sysmetaFor(pid, 'a,b\n1,2\n', 'text/csv', node.subjects.writer, { fileName: 'scanner_found.csv' }),
            serialVersion: 1,
            dateUploaded: now,
            dateSysMetadataModified: now,
            submitter: node.subjects.writer,
            archived: false,
          },
          storageKey: 'not-read-for-data-objects',
          isReplica: false,
        };
        // Written behind the node's back (no notice to the extension): the query still finds it,
        // made private it is refused to anonymous callers at once, removed it is gone at once.
        await node.catalogue.apply!({ insert: [record] });
        expect(await ids(node, 'q=fileName:scanner_found.csv')).toEqual([pid]);
        const { accessPolicy: _open, ...closed } = record.sysmeta;
        await node.catalogue.apply!({ replace: [{ pid, expectedSerialVersion: 1, sysmeta: { ...closed, serialVersion: 2, dateSysMetadataModified: new Date() } }] });
        expect(await ids(node, 'q=fileName:scanner_found.csv')).toEqual([]);
        await node.catalogue.apply!({ remove: [{ pid }] });
        expect(await ids(node, 'q=fileName:scanner_found.csv', 'writer')).toEqual([]);
        expect(await node.ext.indexer!.reconcile()).toBe(0);
        // The position was kept: a second pass looks only at what changed since.
        expect(await node.ext.indexer!.follow()).toBeLessThan(5);
      });
    });

    describe('request limits (InvalidRequest 2823 naming the limit)', () => {
      const post = (params: Array<[string, string]>, who?: 'writer') =>
        fetch(`${node.baseUrl}/v2/query/solr`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...(who ? { Authorization: `Bearer ${node.tokens[who]}` } : {}) },
          body: new URLSearchParams(params).toString(),
        });
      const refused = async (res: Response, limit: RegExp) => {
        const body = await res.text();
        expect(res.status, body).toBe(400);
        expect(body).toMatch(/<error [^>]*detailCode="2823"/);
        expect(body).toMatch(/name="InvalidRequest"/);
        expect(body).toMatch(limit);
      };
      const found = async (res: Response) => {
        const body = await res.text();
        expect(res.status, body.slice(0, 500)).toBe(200);
        return (JSON.parse(body) as { response: { docs: Array<{ id: string }> } }).response.docs.map((d) => d.id).sort();
      };

      it('nesting: 32 levels run on the index, 33 and 100,000 are refused without recursing', async () => {
        const nest = (n: number, inner: string) => '('.repeat(n) + inner + ')'.repeat(n);
        expect(await found(await post([['q', nest(32, 'title:kelp OR fileName:*.csv')], ['fl', 'id'], ['wt', 'json'], ['rows', '1000']]))).toEqual(
          [C('eml-kelp'), C('kelp_cover.csv'), C('penguin_counts.csv')].sort(),
        );
        await refused(await post([['q', nest(33, 'title:kelp')]]), /maxDepth = 32/);
        await refused(await post([['q', '('.repeat(100_000)]]), /maxDepth = 32/);
        await refused(await post([['q', `title:${nest(40, 'kelp')}`]]), /maxDepth = 32/);
      });

      it('clauses: 1,024 ORed terms (q and fq together) run on the index, 10,000 are refused', async () => {
        const terms = (n: number) => Array.from({ length: n }, (_, i) => `id:corpus.none.${i}`);
        const q1024 = [...terms(1023), `id:${C('eml-kelp')}`].join(' OR ');
        expect(await found(await post([['q', q1024], ['fl', 'id'], ['wt', 'json']]))).toEqual([C('eml-kelp')]);
        // Link fields (each clause checks who may see the link) have a lower limit of their own.
        const links = (n: number, op: string) => [...Array.from({ length: n - 1 }, (_, i) => `isDocumentedBy:corpus.none.${i}*`), `isDocumentedBy:${C('eml-kelp')}`].join(op);
        expect(await found(await post([['q', links(64, ' OR ')], ['fl', 'id'], ['wt', 'json']], 'writer'))).toEqual([C('kelp_cover.csv')]);
        expect(await found(await post([['q', `*:* -${links(64, ' -')}`], ['fq', 'formatType:DATA'], ['fl', 'id'], ['wt', 'json']]))).toEqual([C('penguin_counts.csv')]);
        await refused(await post([['q', links(65, ' AND ')]]), /maxLinkClauses = 64/);
        await refused(await post([['q', terms(10_000).join(' OR ')]]), /maxClauses = 1024/);
        await refused(await post([['q', terms(1000).join(' OR ')], ['fq', terms(25).join(' OR ')]]), /maxClauses = 1024/);
      });

      it('fq: 100 filters run, 101 and 2,000 are refused', async () => {
        const fqs = (n: number): Array<[string, string]> => Array.from({ length: n }, () => ['fq', '-id:corpus.none']);
        expect(await found(await post([['q', 'title:kelp'], ...fqs(100), ['fl', 'id'], ['wt', 'json']]))).toEqual([C('eml-kelp')]);
        await refused(await post([['q', '*:*'], ...fqs(101)]), /maxFilterQueries = 100/);
        await refused(await post([['q', '*:*'], ...fqs(2000)]), /maxFilterQueries = 100/);
      });

      it('terms, wildcards and start', async () => {
        await refused(await post([['q', `id:${'x'.repeat(1025)}`]]), /maxTermLength = 1024/);
        await refused(await post([['q', `title:"${'soil '.repeat(300)}"`]]), /maxTermLength = 1024/);
        await refused(await post([['q', `size:[${'9'.repeat(2000)} TO *]`]]), /maxTermLength = 1024/);
        await refused(await post([['q', 'id:*a*a*a*a*a*a*a*a*b']]), /maxWildcards = 8/);
        expect(await found(await post([['q', 'id:*orpus.eml-k*l?'], ['fl', 'id'], ['wt', 'json']]))).toEqual([C('eml-kelp')]);
        await refused(await fetch(`${node.baseUrl}/v2/query/solr/?q=*:*&start=10000001`), /maxStart = 10000000/);
        await refused(await fetch(`${node.baseUrl}/v2/query/solr/?q=*:*&start=${'9'.repeat(30)}`), /maxStart = 10000000/);
      });

      it('a POSTed body over 1 MiB is refused before it is read; a chunked one once past the cap', async () => {
        // A client that announces 20 MB and sends 1 KB: the answer comes without the rest.
        const url = new URL(`${node.baseUrl}/v2/query/solr`);
        const t0 = performance.now();
        const raw = await new Promise<string>((resolve, reject) => {
          const socket = connect(Number(url.port), url.hostname, () => {
            socket.write(`POST ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${20 * 1024 * 1024}\r\n\r\nq=${'a'.repeat(1024)}`);
          });
          let got = '';
          socket.setEncoding('utf8');
          socket.on('data', (d: string) => (got += d));
          socket.on('end', () => resolve(got));
          socket.on('error', reject);
          setTimeout(() => (socket.destroy(), resolve(got)), 5000).unref();
        });
        expect(performance.now() - t0).toBeLessThan(2000);
        expect(raw).toMatch(/^HTTP\/1\.1 400 /);
        expect(raw).toMatch(/connection: close/i);
        expect(raw).toMatch(/detailCode="2823"/);
        expect(raw).toMatch(/maxBodyBytes = 1048576/);
        // Without a Content-Length (chunked): cut off once past the cap.
        const chunk = new Uint8Array(64 * 1024).fill(97);
        let sent = 0;
        const stream = new ReadableStream<Uint8Array>({
          pull(controller) {
            if (sent >= 20) return controller.close();
            sent++;
            controller.enqueue(chunk);
          },
        });
        const chunked = await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: stream, duplex: 'half' } as RequestInit);
        await refused(chunked, /maxBodyBytes = 1048576/);
        // Under the cap, a POSTed query runs.
        expect(await found(await post([['q', `title:kelp ${'-id:none '.repeat(500)}`], ['fl', 'id'], ['wt', 'json']]))).toEqual([C('eml-kelp')]);
        expect((await fetch(`${node.baseUrl}/v2/monitor/ping`)).status).toBe(200);
      });
    });

    describe('package links: what a caller may see, and who may describe an object', () => {
      const L = (s: string) => `links.${s}`;
      const fmt = 'https://eml.ecoinformatics.org/eml-2.2.0';
      const ore = 'http://www.openarchives.org/ore/terms';
      const eml = (title: string): string => recordXml({ ...RECORDS[1]!, pid: 'x', title });
      const open = { accessPolicy: { allow: [{ subject: ['public'], permission: ['read' as const] }] } };
      const closed = { accessPolicy: undefined };
      const doc = async (pid: string, who?: 'writer' | 'other' | 'admin') =>
        (await solr(node, `q=id:${enc(pid)}&fl=id,resourceMap,isDocumentedBy,documents`, who)).response.docs[0];

      beforeAll(async () => {
        const writer = node.client('writer');
        const other = node.client('other');
        const w = node.subjects.writer;
        const csv = async (pid: string, extra: object = open) => writer.create(pid, 'a,b\n1,2\n', sysmetaFor(pid, 'a,b\n1,2\n', 'text/csv', w, extra));
        const meta = async (c: typeof writer, owner: string, pid: string, extra: object = open) => {
          const xml = eml(`Linked record ${pid}`);
          await c.create(pid, xml, sysmetaFor(pid, xml, fmt, owner, extra));
        };
        const map = async (c: typeof writer, owner: string, pid: string, metadata: string, data: string[], extra: object = open) => {
          const xml = resourceMapXml(pid, metadata, data);
          await c.create(pid, xml, sysmetaFor(pid, xml, ore, owner, extra));
        };
        for (const d of ['data1', 'data2', 'data3', 'data5', 'data6']) await csv(L(d));
        await csv(L('data.private'), closed);
        await csv(L('data4'), { accessPolicy: { allow: [{ subject: ['public'], permission: ['read'] }, { subject: [node.subjects.other], permission: ['write'] }] } });
        await meta(writer, w, L('eml.private'), closed);
        await meta(writer, w, L('eml.public'));
        // A private map; a public map naming a private data object; a public map whose metadata is private.
        await map(writer, w, L('map.private'), L('eml.private'), [L('data1')], closed);
        await map(writer, w, L('map.public'), L('eml.public'), [L('data2'), L('data.private')]);
        await map(writer, w, L('map.public2'), L('eml.private'), [L('data3')]);
        // A stranger's public map claiming the writer's data2 (and data4, which the stranger may write).
        await meta(other, node.subjects.other, L('eml.stranger'));
        await map(other, node.subjects.other, L('map.stranger'), L('eml.stranger'), [L('data2'), L('data4')]);
        // A map the writer submitted for the stranger: the object's own rightsHolder wrote it.
        await map(writer, node.subjects.other, L('map.gift'), L('eml.stranger'), [L('data5')]);
        // A stranger's map that names the writer as its rights holder: the submitter still counts.
        await map(other, w, L('map.disguised'), L('eml.stranger'), [L('data6')]);
      });

      it('anonymous and other callers never see a private map, metadata or data identifier', async () => {
        for (const who of [undefined, 'other'] as const) {
          expect(await doc(L('data1'), who)).toEqual({ id: L('data1') });
          expect(await doc(L('data2'), who)).toEqual({ id: L('data2'), resourceMap: [L('map.public')], isDocumentedBy: [L('eml.public')] });
          expect(await doc(L('data3'), who)).toEqual({ id: L('data3'), resourceMap: [L('map.public2')] });
          expect(await doc(L('eml.public'), who)).toEqual({ id: L('eml.public'), resourceMap: [L('map.public')], documents: [L('data2')] });
          for (const q of [
            `isDocumentedBy:${L('eml.private')}`,
            `isDocumentedBy:${L('eml.priv')}*`,
            `isDocumentedBy:*private*`,
            `resourceMap:${L('map.private')}`,
            `resourceMap:*private*`,
            `documents:${L('data.private')}`,
            `documents:*private`,
          ]) {
            expect(await ids(node, `q=${enc(q)}`, who), q).toEqual([]);
          }
          expect(await ids(node, `q=${enc(`id:${L('data')}*`)}&fq=${enc('isDocumentedBy:*')}`, who)).toEqual([L('data2'), L('data4'), L('data5')]);
          const f = await solr(node, `q=${enc('id:links.*')}&rows=0&facet=true&facet.field=isDocumentedBy&facet.field=resourceMap&facet.field=documents&facet.mincount=1`, who);
          const values = Object.values(f.facet_counts!.facet_fields).flat();
          expect(values.filter((v) => typeof v === 'string' && v.includes('private'))).toEqual([]);
          expect(f.facet_counts!.facet_fields.isDocumentedBy).toEqual([L('eml.stranger'), 2, L('eml.public'), 1]);
        }
      });

      it('the owner and administrators see their private links', async () => {
        for (const who of ['writer', 'admin'] as const) {
          expect(await doc(L('data1'), who)).toEqual({ id: L('data1'), resourceMap: [L('map.private')], isDocumentedBy: [L('eml.private')] });
          expect(await doc(L('data3'), who)).toEqual({ id: L('data3'), resourceMap: [L('map.public2')], isDocumentedBy: [L('eml.private')] });
          expect(await doc(L('eml.public'), who)).toEqual({ id: L('eml.public'), resourceMap: [L('map.public')], documents: [L('data2'), L('data.private')] });
          expect(await ids(node, `q=${enc(`isDocumentedBy:${L('eml.priv')}*`)}`, who)).toEqual([L('data1'), L('data3')]);
          const f = await solr(node, `q=${enc('id:links.*')}&rows=0&facet=true&facet.field=resourceMap&facet.mincount=1`, who);
          expect(f.facet_counts!.facet_fields.resourceMap).toContain(L('map.private'));
        }
      });

      it("a stranger's map does not describe someone else's object unless the stranger may write it", async () => {
        for (const who of [undefined, 'writer', 'other', 'admin'] as const) {
          expect(await doc(L('data2'), who)).toEqual({ id: L('data2'), resourceMap: [L('map.public')], isDocumentedBy: [L('eml.public')] });
          expect(await doc(L('data4'), who)).toEqual({ id: L('data4'), resourceMap: [L('map.stranger')], isDocumentedBy: [L('eml.stranger')] });
          expect(await doc(L('data5'), who)).toEqual({ id: L('data5'), resourceMap: [L('map.gift')], isDocumentedBy: [L('eml.stranger')] });
          expect(await doc(L('data6'), who)).toEqual({ id: L('data6') });
          expect(await ids(node, `q=${enc(`isDocumentedBy:${L('eml.stranger')}`)}`, who)).toEqual([L('data4'), L('data5')]);
          expect(await ids(node, `q=${enc(`resourceMap:${L('map.stranger')}`)}`, who)).toEqual([L('data4'), L('eml.stranger')]);
        }
      });

      it('links follow access changes of the map and of the objects they name', async () => {
        const writer = node.client('writer');
        const sm = await writer.getSystemMetadata(L('eml.private'));
        await writer.updateSystemMetadata(L('eml.private'), { ...sm, accessPolicy: open.accessPolicy });
        expect(await doc(L('data3'))).toEqual({ id: L('data3'), resourceMap: [L('map.public2')], isDocumentedBy: [L('eml.private')] });
        // data1's map is still private.
        expect(await doc(L('data1'))).toEqual({ id: L('data1') });
      });
    });
  });
}
