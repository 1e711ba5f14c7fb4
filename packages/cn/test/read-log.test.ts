// A CN's read events are written behind (EventService.recordBehind): a CN stopped by SIGTERM right
// after three gets lists the three reads when the CLI serves its folder again.
import { describe, expect, it } from 'vitest';
import { CN_ADMIN, CnClient, startCn, type CnProcess } from './harness.js';
import { createObject, EML, emlBytes } from './cn-fixtures.js';

describe('CN read events', () => {
  it('reads just before a stop are in the log after a start on the same folder', async () => {
    const first = await startCn();
    let second: CnProcess | undefined;
    try {
      const client = new CnClient(first.baseUrl);
      const admin = await first.token(CN_ADMIN);
      const created = await createObject(client, admin, { pid: 'read-thrice', bytes: emlBytes('read'), rightsHolder: CN_ADMIN, formatId: EML });
      expect(created.status, created.text).toBe(200);
      for (let i = 0; i < 3; i++) expect((await client.get('/v2/object/read-thrice', { token: admin })).status).toBe(200);
      await first.stop({ keep: true });
      second = await startCn({ dir: first.dir });
      const log = await new CnClient(second.baseUrl).get('/v2/log?event=read&idFilter=read-thrice', { token: await second.token(CN_ADMIN) });
      expect(log.status, log.text).toBe(200);
      expect(log.text).toMatch(/total="3"/);
    } finally {
      await second?.stop();
      await first.stop();
    }
  });
});
