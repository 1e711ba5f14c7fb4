// System metadata as real clients and production nodes send it, and the headers it ends in,
// against a node process: describe/get version headers (#16 item 4), the exceptions the
// official integration suite expects (#16 item 6), empty optional elements (#16 item 7),
// values that end in headers (#15 item 9: validated, never a 500, never a leaked file), and
// X-Content-Type-Options on every answer.
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFilesystemStorage } from '@memberkit/adapter-filesystem';
import { createSqlCatalogue } from '@memberkit/adapter-sql';
import { validateXml } from '@memberkit/testkit';
import { receiveUpload } from '@memberkit/core';
import { startNodeProcess, testToken, writeConfig, type NodeProcess } from './support/node-process.js';
import { clientSysmeta } from './support/sysmeta.js';

const WRITER = { Authorization: `Bearer ${await testToken('CN=writer')}` };
const BYTES = Buffer.from('some bytes\n');
const SHA1 = createHash('sha1').update(BYTES).digest('hex');

/** Client sysmeta for BYTES with raw XML spliced in before `</d1:systemMetadata>` (or a replacement). */
function sysmetaXml(pid: string, extra = '', edit: (xml: string) => string = (x) => x): string {
  const xml = clientSysmeta(pid, BYTES);
  return edit(xml.replace(/<\/d1:systemMetadata>$/, `${extra}</d1:systemMetadata>`));
}

function form(parts: Record<string, string | Buffer>): FormData {
  const f = new FormData();
  for (const [name, value] of Object.entries(parts)) {
    if (name === 'object' || name === 'sysmeta') f.append(name, new Blob([value]), name);
    else f.append(name, String(value));
  }
  return f;
}

/** Files of the node's storage the process holds open (sockets of kept-alive connections are not counted). */
function openStorageFiles(pid: number, root: string): number {
  let n = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`).startsWith(root)) n++;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}

describe('system metadata in, headers out', () => {
  let dir: string;
  let node: NodeProcess;
  let base: string;

  const create = (pid: string, sysmeta: string) => fetch(`${base}/v2/object`, { method: 'POST', headers: WRITER, body: form({ pid, object: BYTES, sysmeta }) });
  const update = (pid: string, newPid: string, sysmeta: string) => fetch(`${base}/v2/object/${encodeURIComponent(pid)}`, { method: 'PUT', headers: WRITER, body: form({ newPid, object: BYTES, sysmeta }) });
  const updateSysmeta = (pid: string, sysmeta: string) => fetch(`${base}/v2/meta`, { method: 'PUT', headers: WRITER, body: form({ pid, sysmeta }) });
  const meta = async (pid: string) => (await fetch(`${base}/v2/meta/${encodeURIComponent(pid)}`, { headers: WRITER })).text();
  async function expectException(res: Response, status: number, name: string, detailCode: string): Promise<string> {
    const text = await res.text();
    expect(res.status, text).toBe(status);
    expect(text).toContain(`name="${name}"`);
    expect(text).toContain(`detailCode="${detailCode}"`);
    expect(await validateXml(text)).toBeUndefined();
    return text;
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'memberkit-sysmeta-'));
    writeConfig(dir);
    // A record stored before values were checked: a mediaType and a fileName no header can carry.
    const storage = createFilesystemStorage({ root: join(dir, 'objects') });
    await storage.open();
    const store = createSqlCatalogue({ dialect: 'sqlite', connection: join(dir, 'memberkit.db') });
    await store.open();
    const pending = await receiveUpload(storage, (async function* () { yield BYTES; })());
    const key = await pending.commit('legacy-bad');
    const now = new Date();
    await store.catalogue.apply!({
      insert: [{
        storageKey: key,
        isReplica: false,
        sysmeta: {
          identifier: 'legacy-bad', formatId: 'text/plain', size: BYTES.length, checksum: { algorithm: 'SHA-1\n', value: SHA1 },
          rightsHolder: 'CN=writer', accessPolicy: { allow: [{ subject: ['public'], permission: ['read'] }] }, replica: [],
          mediaType: { name: 'text/plain\r\nX-Injected: 1', property: [{ name: 'charset', value: 'ütf-8 €' }] }, fileName: 'a\r\nb€.txt',
          serialVersion: 1, submitter: 'CN=writer', dateUploaded: now, dateSysMetadataModified: now, archived: false, originMemberNode: 'urn:node:TEST', authoritativeMemberNode: 'urn:node:TEST',
        },
      }],
    });
    await store.close();
    await storage.close();
    node = await startNodeProcess(dir);
    base = node.baseUrl;
  });
  afterAll(async () => {
    await node?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('describe and get send DataONE-Obsoletes, DataONE-ObsoletedBy and (v2) DataONE-SeriesId', async () => {
    expect((await create('v-1', sysmetaXml('v-1', '<seriesId>series-v</seriesId>'))).status).toBe(200);
    expect((await update('v-1', 'v-2', sysmetaXml('v-2', '<obsoletes>v-1</obsoletes><seriesId>series-v</seriesId>'))).status).toBe(200);
    for (const method of ['HEAD', 'GET']) {
      const first = await fetch(`${base}/v2/object/v-1`, { method });
      expect(first.headers.get('DataONE-ObsoletedBy')).toBe('v-2');
      expect(first.headers.get('DataONE-SeriesId')).toBe('series-v');
      expect(first.headers.get('DataONE-Obsoletes')).toBeNull();
      const second = await fetch(`${base}/v2/object/v-2`, { method });
      expect(second.headers.get('DataONE-Obsoletes')).toBe('v-1');
      expect(second.headers.get('DataONE-ObsoletedBy')).toBeNull();
      expect(second.headers.get('DataONE-SeriesId')).toBe('series-v');
      const v1 = await fetch(`${base}/v1/object/v-2`, { method });
      expect(v1.headers.get('DataONE-Obsoletes')).toBe('v-1');
      expect(v1.headers.get('DataONE-SeriesId')).toBeNull();
    }
  });

  it('X-Content-Type-Options: nosniff on every answer: bytes, documents, errors, ping', async () => {
    const answers = [
      await fetch(`${base}/v2/object/v-1`),
      await fetch(`${base}/v2/object/v-1`, { method: 'HEAD' }),
      await fetch(`${base}/v2/object/v-1`, { headers: { Range: 'bytes=0-1' } }),
      await fetch(`${base}/v2/meta/v-1`),
      await fetch(`${base}/v2/meta/v-1`, { method: 'HEAD' }),
      await fetch(`${base}/v1/meta/v-1`),
      await fetch(`${base}/v2/object?count=2`),
      await fetch(`${base}/v2/object/nothing-here`, { method: 'HEAD' }),
      await fetch(`${base}/v1/node`),
      await fetch(`${base}/v2/monitor/ping`),
      await fetch(`${base}/v2/object/nothing-here`),
      await fetch(`${base}/v2/no-such-operation`),
      await fetch(`${base.replace(/\/mn$/, '')}/elsewhere`),
    ];
    for (const res of answers) expect(res.headers.get('x-content-type-options'), res.url).toBe('nosniff');
  });

  it('archived=true on create is stored as true', async () => {
    expect((await create('born-archived', sysmetaXml('born-archived', '<archived>true</archived>'))).status).toBe(200);
    expect(await meta('born-archived')).toContain('<archived>true</archived>');
  });

  it('updateSystemMetadata whose identifier differs from the pid -> InvalidRequest 4869', async () => {
    expect((await create('usm-a', sysmetaXml('usm-a'))).status).toBe(200);
    const res = await updateSysmeta('usm-a', sysmetaXml('usm-other'));
    await expectException(res, 400, 'InvalidRequest', '4869');
  });

  it('a new seriesId that already names another series -> InvalidSystemMetadata (update 1300, updateSystemMetadata 4956)', async () => {
    expect((await create('other-head', sysmetaXml('other-head', '<seriesId>taken-series</seriesId>'))).status).toBe(200);
    expect((await create('lone', sysmetaXml('lone'))).status).toBe(200);
    await expectException(await update('lone', 'lone-2', sysmetaXml('lone-2', '<obsoletes>lone</obsoletes><seriesId>taken-series</seriesId>')), 400, 'InvalidSystemMetadata', '1300');
    await expectException(await updateSysmeta('lone', sysmetaXml('lone', '<seriesId>taken-series</seriesId>')), 400, 'InvalidSystemMetadata', '4956');
    expect(await meta('lone')).not.toContain('<seriesId>');
    expect((await fetch(`${base}/v2/meta/lone-2`)).status).toBe(404);
  });

  it('empty optional elements read as absent on create, update and updateSystemMetadata, and are never written', async () => {
    const empties = '<seriesId/><fileName/>';
    const replication = (xml: string) => xml.replace('</accessPolicy>', '</accessPolicy><replicationPolicy replicationAllowed="false"><preferredMemberNode/></replicationPolicy><obsoletes></obsoletes>');
    expect((await create('empty-1', sysmetaXml('empty-1', empties, replication))).status).toBe(200);
    expect((await update('empty-1', 'empty-2', sysmetaXml('empty-2', empties, (x) => x.replace('</accessPolicy>', '</accessPolicy><obsoletes>empty-1</obsoletes>')))).status).toBe(200);
    expect((await updateSysmeta('empty-2', sysmetaXml('empty-2', '<seriesId/>', (x) => x.replace('</accessPolicy>', '</accessPolicy><obsoletes>empty-1</obsoletes><obsoletedBy/>')))).status).toBe(200);
    for (const pid of ['empty-1', 'empty-2']) {
      const xml = await meta(pid);
      expect(xml, xml).not.toMatch(/<seriesId|<fileName|<preferredMemberNode|<(\w+)><\/\1>|<\w+\/>/);
      expect(await validateXml(xml)).toBeUndefined();
    }
  });

  describe('values that end in headers are checked (#15 item 9)', () => {
    const bad: Array<[string, string]> = [
      ['a mediaType name with CR/LF', '<mediaType name="text/plain&#13;&#10;X-Injected: 1"/>'],
      ['a mediaType name that is not type/subtype', '<mediaType name="text plain"/>'],
      ['a mediaType name beyond ASCII', '<mediaType name="tëxt/plain"/>'],
      ['a mediaType property value with LF', '<mediaType name="text/plain"><property name="charset">utf-8&#10;X: y</property></mediaType>'],
      ['a mediaType property value beyond Latin-1', '<mediaType name="text/plain"><property name="charset">utf-8 €</property></mediaType>'],
      ['a mediaType property name that is not a token', '<mediaType name="text/plain"><property name="char set">utf-8</property></mediaType>'],
      ['a fileName with a control character', '<fileName>a&#10;b.txt</fileName>'],
      ['a fileName with DEL', '<fileName>a&#127;b.txt</fileName>'],
    ];
    it.each(bad)('%s -> InvalidSystemMetadata at create (1180), update (1300) and updateSystemMetadata (4956); nothing stored', async (_what, element) => {
      const pid = `bad-${Math.random().toString(36).slice(2)}`;
      await expectException(await create(pid, sysmetaXml(pid, element)), 400, 'InvalidSystemMetadata', '1180');
      expect((await fetch(`${base}/v2/meta/${pid}`)).status).toBe(404);
      expect((await create(pid, sysmetaXml(pid))).status).toBe(200);
      await expectException(await update(pid, `${pid}-2`, sysmetaXml(`${pid}-2`, `<obsoletes>${pid}</obsoletes>${element}`)), 400, 'InvalidSystemMetadata', '1300');
      await expectException(await updateSysmeta(pid, sysmetaXml(pid, element)), 400, 'InvalidSystemMetadata', '4956');
      expect((await fetch(`${base}/v2/object/${pid}`)).status).toBe(200);
    });

    it('good values pass and arrive intact: a quoted parameter, a Unicode file name (RFC 6266/5987), a checksum algorithm with blanks normalised', async () => {
      const extra = '<mediaType name="text/csv"><property name="charset">utf-8</property><property name="header">"present"; x</property></mediaType><fileName>données (1)\'s.csv</fileName>';
      const xml = sysmetaXml('good-values', extra, (x) => x.replace('algorithm="SHA-1"', 'algorithm=" sha1&#10;"'));
      expect((await create('good-values', xml)).status).toBe(200);
      const res = await fetch(`${base}/v2/object/good-values`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8; header="\\"present\\"; x"');
      expect(res.headers.get('content-disposition')).toBe(`attachment; filename="donn_es (1)'s.csv"; filename*=UTF-8''donn%C3%A9es%20%281%29%27s.csv`);
      expect(res.headers.get('dataone-checksum')).toBe(`SHA-1,${SHA1}`);
      expect(await meta('good-values')).toContain(`<checksum algorithm="SHA-1">${SHA1}</checksum>`);
    });

    it('a record stored before the checks is served (safe headers) and 300 reads of it (and 50 hang-ups) leave no file open', async () => {
      const pid = node.child.pid!;
      const get = () => fetch(`${base}/v2/object/legacy-bad`).then(async (r) => ({ status: r.status, headers: r.headers, body: Buffer.from(await r.arrayBuffer()) }));
      const first = await get();
      expect(first.status).toBe(200);
      expect(first.body.equals(BYTES)).toBe(true);
      expect(first.headers.get('content-type')).toBe('text/plain');
      expect(first.headers.get('dataone-checksum')).toBe(`SHA-1,${SHA1}`);
      expect(first.headers.get('content-disposition')).toMatch(/^attachment; filename="legacy-bad\.txt"/);
      expect((await fetch(`${base}/v2/object/legacy-bad`, { method: 'HEAD' })).status).toBe(200);
      const root = realpathSync(join(dir, 'objects'));
      const before = openStorageFiles(pid, root);
      for (let round = 0; round < 6; round++) {
        const batch = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 5 === 4 ? fetch(`${base}/v2/object/legacy-bad`, { headers: { Range: 'bytes=2-5' } }).then(async (r) => ({ status: r.status, body: await r.arrayBuffer() })) : get())));
        for (const r of batch) expect([200, 206]).toContain(r.status);
      }
      // Clients that hang up right after the head.
      await Promise.all(Array.from({ length: 50 }, () => new Promise<void>((resolve) => {
        const req = request(`${base}/v2/object/legacy-bad`, (res) => (res.destroy(), resolve()));
        req.on('error', () => resolve());
        req.end();
      })));
      await new Promise((r) => setTimeout(r, 200));
      const after = openStorageFiles(pid, root);
      expect(after - before, `open storage files ${before} -> ${after}`).toBe(0);
    });
  });
});
