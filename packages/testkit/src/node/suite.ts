import { describe, expect, it } from 'vitest';
import type { ApiVersion } from '@memberkit/types';
import { VERSIONS, useNodeSuiteContext, type NodeSuiteContext, type NodeSuiteTarget } from './context.js';
import { registerCoreTests } from './core.js';
import { registerCreateTests } from './create.js';
import { registerReadTests } from './read.js';
import { registerListObjectsTests } from './list-objects.js';
import { registerLogRecordsTests } from './log-records.js';
import { registerUpdateTests } from './update.js';
import { registerArchiveDeleteTests } from './archive-delete.js';
import { registerAuthorizationTests } from './authorization.js';
import { registerIdentifiersTests } from './identifiers.js';
import { registerUpdateSystemMetadataTests } from './update-sysmeta.js';
import { registerErrorsTests } from './errors.js';

export type { NodeSuiteTarget } from './context.js';

/** Registers one API group's tests on the shared context, for each of `versions`. */
export type NodeSuiteGroup = (ctx: NodeSuiteContext, versions?: readonly ApiVersion[]) => void;

/** The node suite's API groups, by name, in the order they run. */
export const NODE_SUITE_GROUPS = {
  core: registerCoreTests,
  create: registerCreateTests,
  read: registerReadTests,
  'list-objects': registerListObjectsTests,
  'log-records': registerLogRecordsTests,
  update: registerUpdateTests,
  'archive-delete': registerArchiveDeleteTests,
  authorization: registerAuthorizationTests,
  identifiers: registerIdentifiersTests,
  'update-sysmeta': registerUpdateSystemMetadataTests,
  errors: registerErrorsTests,
} as const satisfies Record<string, NodeSuiteGroup>;

export type NodeSuiteGroupName = keyof typeof NODE_SUITE_GROUPS;

export interface NodeSuiteOptions {
  /**
   * Groups to skip, each with a written reason. A skipped group's tests are reported as
   * skipped, with `[opted out: <reason>]` in the title, never as passed. A key that names no
   * group, or an empty reason, fails the suite (test `options name only node suite groups,
   * each with a reason`).
   */
  skip?: Partial<Record<NodeSuiteGroupName, string>>;
  /**
   * Run only these groups (e.g. `['read']` while working on MNRead). The others are
   * reported as skipped with `[not in options.only]`. Default: every group.
   */
  only?: readonly NodeSuiteGroupName[];
}

const GROUP_NAMES = Object.keys(NODE_SUITE_GROUPS) as NodeSuiteGroupName[];
/** Groups registered once per API version, in the order of the original single-file suite. */
const PER_VERSION: readonly NodeSuiteGroupName[] = ['read', 'list-objects', 'log-records', 'update', 'archive-delete', 'authorization', 'identifiers'];
/** With every group running, the suite receives more than this many XML bodies. */
const FULL_SUITE_XML_BODIES = 100;

/**
 * The node-level conformance suite: every Member Node operation over real HTTP, v1 and v2,
 * against the spec (member-node-interface.md), INTEROP.md and the API reference's detail
 * codes, one API group per file (see NODE_SUITE_GROUPS). Every XML body received is
 * validated against the official XSDs (afterEach, one xmllint call per test). Objects get
 * fresh identifiers per run, so the node may hold other content; tests run in order within
 * the file.
 */
export function runNodeSuite(
  name: string,
  target: () => NodeSuiteTarget | Promise<NodeSuiteTarget>,
  options: NodeSuiteOptions = {},
): void {
  const skip = options.skip ?? {};
  const problems = [
    ...Object.keys(skip).filter((g) => !Object.hasOwn(NODE_SUITE_GROUPS, g)).map((g) => `no group is named "${g}"`),
    ...(options.only ?? []).filter((g) => !Object.hasOwn(NODE_SUITE_GROUPS, g)).map((g) => `options.only: no group is named "${g}"`),
    ...Object.entries(skip).filter(([, reason]) => typeof reason !== 'string' || reason.trim() === '').map(([g]) => `"${g}" has no written reason`),
  ];
  /** Why `group` does not run, or undefined when it runs. */
  const notRun = (group: NodeSuiteGroupName): string | undefined => {
    const reason = skip[group]?.trim();
    if (reason) return `opted out: ${reason}`;
    if (options.only && !options.only.includes(group)) return 'not in options.only';
    return undefined;
  };
  const allRun = GROUP_NAMES.every((g) => notRun(g) === undefined);

  describe(`Member Node over HTTP: ${name}`, () => {
    const ctx = useNodeSuiteContext(target);
    const register = (group: NodeSuiteGroupName, versions: readonly ApiVersion[] = VERSIONS) => {
      const why = notRun(group);
      // describe.skip: every test of the group is still listed, as skipped, with the reason.
      if (why) describe.skip(`${group} [${why}]`, () => NODE_SUITE_GROUPS[group](ctx, versions));
      else NODE_SUITE_GROUPS[group](ctx, versions);
    };

    register('core');
    register('create');
    for (const v of VERSIONS) for (const group of PER_VERSION) register(group, [v]);
    register('update-sysmeta');

    const xmlCheck = 'every XML body received so far was XSD-validated';
    if (GROUP_NAMES.some((g) => g !== 'errors' && notRun(g) === undefined)) {
      it(xmlCheck, async () => {
        await ctx.collector.flush();
        // A partial run receives fewer bodies; it must still have validated what it got.
        expect(ctx.collector.validated, 'XML bodies validated').toBeGreaterThan(allRun ? FULL_SUITE_XML_BODIES : 0);
      });
    } else {
      it.skip(`${xmlCheck} [no group before it runs]`, () => undefined);
    }

    register('errors');

    if (problems.length > 0) {
      it('options name only node suite groups, each with a reason', () => {
        throw new Error(`testkit: invalid runNodeSuite options: ${problems.join('; ')}`);
      });
    }
  });
}
