// Seeds a data folder through ANOTHER commit's own benchmark seeding (its bench/lib/seed.ts and
// bench/lib/backend.ts, with its own adapters), for --compare: the on-disk format of a data
// folder may differ between commits (an older memberkit cannot read a newer folder).
// Run by lib/compare.ts with cwd and tsconfig of the other commit's worktree; it imports
// nothing of this checkout, so every module it loads resolves inside that worktree.
//
//   argv: <worktree> <job JSON>
//   job:  { backend, kind: 'catalogue', dir, options } | { backend, kind: 'large', dir, pid, size }
// Prints the seed function's result as JSON on its last stdout line.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

type Job = { backend: string; dir: string } & ({ kind: 'catalogue'; options: Record<string, unknown> } | { kind: 'large'; pid: string; size: number });

const root = process.argv[2]!;
const job = JSON.parse(process.argv[3] ?? '{}') as Job;
const load = (file: string) => import(pathToFileURL(join(root, 'bench', 'lib', file)).href);

const backendModule = (await load('backend.ts')) as { createBackend(name: string): Promise<unknown>; useBackend(backend: unknown): void };
const seedModule = (await load('seed.ts')) as {
  seedCatalogue(dir: string, options: Record<string, unknown>): Promise<string[]>;
  seedLarge(dir: string, pid: string, size: number): Promise<{ path: string; sha1: string }>;
};
// Not stopped at the end: the backend's stop() drops the PostgreSQL schemas it made, which the
// node started next must find seeded (the runner's backend drops them when the run ends).
backendModule.useBackend(await backendModule.createBackend(job.backend));
const result = job.kind === 'catalogue' ? await seedModule.seedCatalogue(job.dir, job.options) : await seedModule.seedLarge(job.dir, job.pid, job.size);
// Exit once the line is written: stdout is a pipe, where an exit right after write() cuts a
// long answer (100,000 identifiers) short. The exit itself ends what the seeding left open.
process.stdout.write(`\n${JSON.stringify(result)}\n`, () => process.exit(0));
