// CNCore end to end (coordinating-node-interface.md, "CNCore"): a CN started by the CLI on a
// fresh folder, on SQLite and on PostgreSQL, every XML body validated against the XSDs.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CnClient, DATABASES, startCn, type CnProcess } from './harness.js';

describe.each(DATABASES)('CNCore on %s', (database) => {
  let cn: CnProcess;
  let client: CnClient;
  beforeAll(async () => {
    cn = await startCn({ database });
    client = new CnClient(cn.baseUrl);
  });
  afterAll(async () => {
    await cn?.stop();
  });
  afterEach(async () => {
    await client.validate();
  });

  it.each(['v1', 'v2'])('ping (%s): 200 with a Date header', async (version) => {
    const r = await client.get(`/${version}/monitor/ping`);
    expect(r.status).toBe(200);
    expect(Date.parse(r.headers.get('date') ?? '')).not.toBeNaN();
  });

  it.each(['v1', 'v2'])('getCapabilities (%s): the CN\'s Node document, type cn, with its services', async (version) => {
    for (const path of [`/${version}`, `/${version}/`]) {
      const r = await client.get(path);
      expect(r.status, path).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/xml/);
      expect(r.text).toContain('type="cn"');
      expect(r.text).toContain('<identifier>urn:node:CNLOCAL</identifier>');
      for (const service of ['CNCore', 'CNRead', 'CNAuthorization', 'CNIdentity', 'CNRegister']) expect(r.text).toContain(`name="${service}"`);
    }
  });

  it('getCapabilities at the bare base address', async () => {
    const r = await client.get('');
    expect(r.status).toBe(200);
    expect(r.text).toContain('type="cn"');
  });

  it('an unknown path answers a DataONE NotFound', async () => {
    const r = await client.get('/v2/no-such-thing');
    expect(r.status).toBe(404);
    expect(r.text).toContain('name="NotFound"');
  });
});
