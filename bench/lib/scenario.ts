import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import type { NodeProcess } from '../../test/support/node-process.js';
import type { BenchOptions, ResultRow, Subject } from './common.js';
import type { RefCheckout } from './compare.js';
import { interleave, type Measure } from './interleave.js';
import { startMemberkit } from './memberkit.js';
import { seedCatalogue, seedLarge, type SeedOptions } from './seed.js';

/** Seeding of one node's data folder, through that node's own memberkit code. */
export interface Seeder {
  catalogue(dir: string, options: SeedOptions): Promise<string[]>;
  large(dir: string, pid: string, size: number): Promise<{ path: string; sha1: string }>;
}

export interface NodesUnderTest<T> {
  /** What seeding this checkout's node returned (baselines are built from it). */
  seeded: T;
  /** The node of a memberkit subject (this checkout's or the --compare ref's). */
  of(subject: Subject): NodeProcess;
  stop(): Promise<void>;
}

export interface ScenarioContext {
  options: BenchOptions;
  /** A fresh temporary folder for this scenario (removed by the runner after the scenario). */
  tmp: string;
  /** A new sub-folder of tmp. */
  folder(name: string): string;
  /** Who is measured, in round 0's order: memberkit, the ref (with --compare), the baseline. */
  subjects: readonly Subject[];
  ref?: RefCheckout;
  /**
   * Seeds (once; each node through its own code) and starts this checkout's node and, with
   * --compare, the ref's, each on a data folder of its own with the same generated configuration.
   */
  startNodes<T = undefined>(name: string, seed?: (seeder: Seeder, dir: string) => Promise<T>, overrides?: Record<string, unknown>): Promise<NodesUnderTest<T>>;
  /** Starts one node of a memberkit subject on `dir` (scenarios that need a fresh node per round). */
  startNode(subject: Subject, dir: string, overrides?: Record<string, unknown>): Promise<NodeProcess>;
  /** Runs the measures for every subject, options.repeat rounds, interleaved; one row per metric. */
  interleave(measures: Measure[]): Promise<ResultRow[]>;
}

export interface Scenario {
  name: string;
  description: string;
  /** What one run costs, for --help: seconds at options `o` with `subjects` subjects, and why. */
  cost(o: BenchOptions, subjects: number): { seconds: number; what: string };
  run(ctx: ScenarioContext): Promise<ResultRow[]>;
}

const headSeeder: Seeder = { catalogue: seedCatalogue, large: seedLarge };

function refSeeder(ref: RefCheckout, backend: string): Seeder {
  return {
    catalogue: (dir, options) => ref.seedCatalogue(dir, options, backend),
    large: (dir, pid, size) => ref.seedLarge(dir, pid, size, backend),
  };
}

/**
 * Waits until a node that was started on a seeded folder has done its start-up work: a query
 * answers once the search index holds every seeded object (a new index walks the catalogue).
 * The scenarios measure a node at work, not one still indexing what the seeding wrote behind
 * its back. A node without the query API answers at once.
 */
async function settled(node: NodeProcess): Promise<NodeProcess> {
  const res = await fetch(`${node.baseUrl}/v2/query/solr/?q=*:*&rows=0`, { signal: AbortSignal.timeout(600_000) }).catch(() => undefined);
  await res?.arrayBuffer();
  return node;
}

export function scenarioContext(scenario: string, options: BenchOptions, tmp: string, ref?: RefCheckout): ScenarioContext {
  const subjects: Subject[] = ref ? ['memberkit', 'ref', 'baseline'] : ['memberkit', 'baseline'];
  const folder = (name: string) => mkdtempSync(join(tmp, `${name}-`));
  const startNode = (subject: Subject, dir: string, overrides: Record<string, unknown> = {}) => {
    if (subject === 'baseline') throw new Error('the baseline is not a memberkit node');
    return startMemberkit(dir, overrides, subject === 'ref' ? ref : undefined);
  };
  return {
    options,
    tmp,
    folder,
    subjects,
    ...(ref ? { ref } : {}),
    startNode,
    async startNodes<T>(name: string, seed?: (seeder: Seeder, dir: string) => Promise<T>, overrides: Record<string, unknown> = {}) {
      const started = new Map<Subject, NodeProcess>();
      const stop = async () => {
        for (const node of started.values()) await node.stop();
      };
      try {
        const dir = folder(name);
        const seeded = (seed ? await seed(headSeeder, dir) : undefined) as T;
        started.set('memberkit', await settled(await startNode('memberkit', dir, overrides)));
        if (ref) {
          const refDir = folder(`${name}-ref`);
          const refSeeded = seed ? await seed(refSeeder(ref, options.backend), refDir) : undefined;
          // The same PIDs on both nodes, or the two would not answer the same requests.
          if (Array.isArray(seeded) && JSON.stringify(seeded) !== JSON.stringify(refSeeded)) throw new Error(`${name}: the ref's seeding made other identifiers than this checkout's`);
          started.set('ref', await settled(await startNode('ref', refDir, overrides)));
        }
        return {
          seeded,
          of: (subject: Subject) => {
            const node = started.get(subject);
            if (!node) throw new Error(`no node for ${subject}`);
            return node;
          },
          stop,
        };
      } catch (err) {
        await stop();
        throw err;
      }
    },
    interleave: (measures) => interleave(scenario, options.backend, subjects, options.repeat, measures),
  };
}
