// "50 concurrent reservations of one identifier from different subjects: exactly one
// succeeds" (issue #20, Done when), over real HTTP against a CN started by the CLI, on SQLite
// and on PostgreSQL; the winner owns the reservation, every other caller got IdentifierNotUnique.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CnClient, DATABASES, errorOf, startCn, type CnProcess } from './harness.js';

describe.each(DATABASES)('concurrent reservations on %s', (database) => {
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

  it('50 subjects reserve one identifier at once: exactly one succeeds', async () => {
    const subjects = Array.from({ length: 50 }, (_, i) => `CN=Racer ${i},O=Example,C=US,DC=cilogon,DC=org`);
    const tokens = await Promise.all(subjects.map((s) => cn.token(s)));
    for (const round of [1, 2]) {
      const id = `contested-${database}-${round}`;
      const results = await Promise.all(tokens.map((token, i) => client.form('POST', `/${i % 2 ? 'v1' : 'v2'}/reserve`, { [i % 3 ? 'pid' : 'id']: id }, { token })));
      const winners = results.flatMap((r, i) => (r.status === 200 ? [i] : []));
      expect(winners, results.map((r) => r.status).join(',')).toHaveLength(1);
      for (const [i, r] of results.entries()) {
        if (i === winners[0]) continue;
        expect(r.status, r.text).toBe(409);
        expect(errorOf(r).name).toBe('IdentifierNotUnique');
      }
      const winner = subjects[winners[0]!]!;
      expect((await client.get(`/v2/reserve/${id}?subject=${encodeURIComponent(winner)}`)).status).toBe(200);
      const loser = subjects[(winners[0]! + 1) % subjects.length]!;
      expect((await client.get(`/v2/reserve/${id}?subject=${encodeURIComponent(loser)}`)).status).toBe(401);
    }
  });
});
