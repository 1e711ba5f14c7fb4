// CNView end to end (coordinating-node-interface.md, "CNView (v2.0)"; issue #20 item 7): the
// landing pages of @memberkit/views over the CN's copies, SQLite and PostgreSQL.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CN_ADMIN, CnClient, DATABASES, errorOf, startCn, type CnProcess, type Received } from './harness.js';
import { createObject, EML, emlBytes, memberNodeSysmeta, registered } from './cn-fixtures.js';

const ALICE = 'CN=Alice,O=Example,C=US,DC=cilogon,DC=org';
const BOB = 'CN=Bob,O=Example,C=US,DC=cilogon,DC=org';

function expectError(r: Received, name: string, errorCode: number, detailCode?: string): void {
  expect(r.status, r.text).toBe(errorCode);
  expect(errorOf(r).name, r.text).toBe(name);
  if (detailCode !== undefined) expect(errorOf(r).detailCode, r.text).toBe(detailCode);
}

describe.each(DATABASES)('CNView on %s', (database) => {
  let cn: CnProcess;
  let client: CnClient;
  let admin: string;
  beforeAll(async () => {
    cn = await startCn({ database });
    client = new CnClient(cn.baseUrl);
    admin = await cn.token(CN_ADMIN);
    const held = await createObject(client, admin, { pid: 'landing-eml', bytes: emlBytes('Kelp forest survey'), rightsHolder: ALICE, formatId: EML });
    expect(held.status, held.text).toBe(200);
    const secret = await createObject(client, admin, { pid: 'landing-private', bytes: emlBytes('Private survey'), rightsHolder: ALICE, formatId: EML, allow: [] });
    expect(secret.status, secret.text).toBe(200);
    await registered(client, admin, memberNodeSysmeta('landing-data', 'urn:node:MNA'));
  });
  afterAll(async () => {
    await cn?.stop();
  });
  afterEach(async () => {
    await client.validate();
  });

  it("listViews: an OptionList with the theme 'default', at /views and /view", async () => {
    for (const path of ['/v2/views', '/v2/view']) {
      const r = await client.get(path);
      expect(r.status, r.text).toBe(200);
      expect(r.text).toContain('<option');
      expect(r.text).toContain('default');
    }
  });

  it('view: the landing page of science metadata the CN holds, HTML; an unknown theme renders with the default', async () => {
    for (const theme of ['default', 'no-such-theme']) {
      const r = await client.get(`/v2/views/${theme}/landing-eml`);
      expect(r.status, r.text).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^text\/html/);
      expect(r.text).toContain('Kelp forest survey');
    }
  });

  it('view: an object registered by its system metadata only is described from it', async () => {
    const r = await client.get('/v2/views/default/landing-data');
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    expect(r.text).toContain('landing-data');
    // The CN does not hold the bytes: the download link goes through CNRead.resolve, never the CN's get.
    expect(r.text).toContain('/v2/resolve/landing-data');
    expect(r.text).not.toContain('/v2/object/landing-data');
  });

  it('view: NotFound for an unknown object, NotAuthorized for one the caller may not read (CNView detail codes)', async () => {
    expectError(await client.get('/v2/views/default/no-such-object'), 'NotFound', 404, '2855');
    expectError(await client.get('/v2/views/default/landing-private', { token: await cn.token(BOB) }), 'NotAuthorized', 401, '2852');
    const own = await client.get('/v2/views/default/landing-private', { token: await cn.token(ALICE) });
    expect(own.status).toBe(200);
  });
});
