import type { Node, SubjectInfo } from '@memberkit/types';
/** A registered node and whether an administrator approved it. */
export interface RegisteredNode { node: Node; approved: boolean }
/** The CN's node registry (H4 implements over mk_cn_nodes). */
export interface NodeDirectory {
  get(nodeId: string): Promise<RegisteredNode | undefined>;
  /** Approved nodes only unless includeUnapproved. */
  list(options?: { includeUnapproved?: boolean }): Promise<RegisteredNode[]>;
}
/** The CN's identity store seen by authorization (H3 implements over mk_cn_* identity tables). */
export interface SubjectDirectory {
  /** SubjectInfo of `subject`: its person record with equivalent identities and groups, transitively expanded. */
  lookup(subject: string): Promise<SubjectInfo | undefined>;
  /** Every subject `subject` acts as (itself, equivalents, groups, transitively) — the ONE expansion function. */
  expand(subject: string): Promise<ReadonlySet<string>>;
}
