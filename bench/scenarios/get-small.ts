// get of a 4 KiB object: requests/s at 16 connections, against a bare node:http server piping
// the same stored file.
import { row, runLoad, startServerProcess, type AutocannonSummary } from '../lib/common.js';
import { startMemberkit } from '../lib/memberkit.js';
import type { Scenario } from '../lib/scenario.js';
import { seedLarge } from '../lib/seed.js';

export const getSmall: Scenario = {
  name: 'get-small',
  description: 'get of a 4 KiB object: requests/s vs a bare node:http pipe of the same file',
  async run(ctx) {
    const { options } = ctx;
    const dir = ctx.folder('get-small');
    const { path } = await seedLarge(dir, 'small-4k', 4096);
    const node = await startMemberkit(dir);
    const baseline = await startServerProcess('baselines/pipe-file.ts', [path]);
    try {
      const job = (url: string) => ({ kind: 'autocannon', url, connections: 16, duration: options.duration });
      const mk = await runLoad<AutocannonSummary>(job(`${node.baseUrl}/v2/object/small-4k`));
      const bl = await runLoad<AutocannonSummary>(job(`http://127.0.0.1:${baseline.port}/small-4k`));
      if (mk.non2xx > 0 || mk.errors > 0) throw new Error(`get: ${mk.non2xx} non-2xx, ${mk.errors} errors`);
      const name = 'bare node:http pipe, same file';
      return [
        row('get-small', 'get 4 KiB c=16 req/s', 'req/s', mk.rps, bl.rps, name, true, options.backend),
        row('get-small', 'get 4 KiB c=16 p99', 'ms', mk.p99, bl.p99, name, false, options.backend),
      ];
    } finally {
      await baseline.stop();
      await node.stop();
    }
  },
};
