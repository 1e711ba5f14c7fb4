import { inject, injectable } from 'inversify';
import type { Permission, SystemMetadata } from '@memberkit/types';
import type { CoreConfig } from '../config.js';
import { TOKENS } from '../tokens.js';
import type { Session } from '../session.js';
import { OPERATIONS, type Requirement } from '../protocol/operations.js';
import type { Operation } from '../errors.js';

/** read < write < changePermission: a grant implies the lesser permissions. */
const LEVEL: Record<Permission, number> = { read: 1, write: 2, changePermission: 3 };

/** Whether one of `subjects` is in `set`. */
function holdsAny(subjects: ReadonlySet<string>, set: ReadonlySet<string>): boolean {
  if (set.size === 0) return false;
  for (const s of subjects) if (set.has(s)) return true;
  return false;
}

/** `some` callback with the caller's subjects as `this` (no closure per call). */
function isIn(this: ReadonlySet<string>, subject: string): boolean {
  return this.has(subject);
}

/**
 * The node's authorization rules, in one place:
 * - node administrators and the federation's CN subjects hold every right on every object;
 * - the rightsHolder holds every right on its object;
 * - otherwise a permission is granted by an accessPolicy rule naming one of the caller's
 *   subjects (including `public` and `authenticatedUser`) with that permission or a greater one.
 */
@injectable()
export class AccessControl {
  private readonly admins: ReadonlySet<string>;
  private readonly cns: ReadonlySet<string>;

  constructor(@inject(TOKENS.Config) private readonly config: CoreConfig) {
    this.admins = new Set(config.access.administrators);
    this.cns = new Set(config.access.cnSubjects);
  }

  isAdministrator(session: Session): boolean {
    return holdsAny(session.subjects, this.admins);
  }

  isCoordinatingNode(session: Session): boolean {
    return session.coordinatingNode === true || holdsAny(session.subjects, this.cns);
  }

  /** Administrators and CNs see and may do everything. */
  isPrivileged(session: Session): boolean {
    return this.isAdministrator(session) || this.isCoordinatingNode(session);
  }

  allows(session: Session, sysmeta: Pick<SystemMetadata, 'rightsHolder' | 'accessPolicy'>, permission: Permission): boolean {
    if (this.isPrivileged(session)) return true;
    if (session.subjects.has(sysmeta.rightsHolder)) return true;
    const needed = LEVEL[permission];
    // Loops, not some() with closures: this runs on every read of an object.
    for (const rule of sysmeta.accessPolicy?.allow ?? []) {
      if (!rule.subject.some(isIn, session.subjects)) continue;
      for (const p of rule.permission) if ((LEVEL[p] ?? 0) >= needed) return true;
    }
    return false;
  }

  /**
   * The subjects whose read access filters listings (listObjects, getLogRecords), or
   * undefined when the caller sees everything.
   */
  listingFilter(session: Session): readonly string[] | undefined {
    return this.isPrivileged(session) ? undefined : [...session.subjects];
  }

  /**
   * True when the caller meets `requirement` (from the operation table); an object
   * permission is checked on `sysmeta`, which it then needs.
   */
  meets(session: Session, requirement: Requirement, sysmeta?: Pick<SystemMetadata, 'rightsHolder' | 'accessPolicy'>): boolean {
    switch (requirement) {
      case 'none':
        return true;
      case 'privileged':
        return this.isPrivileged(session);
      case 'create':
        return this.mayCreate(session);
      case 'authenticated':
        return session.authenticated || this.mayCreate(session);
      default:
        if (!sysmeta) throw new Error(`the ${requirement} permission is checked on an object`);
        return this.allows(session, sysmeta, requirement);
    }
  }

  /** The operation table's requirement of `op`. */
  requirementOf(op: Operation): Requirement {
    return OPERATIONS[op].permission;
  }

  mayCreate(session: Session): boolean {
    if (this.isPrivileged(session)) return true;
    const policy = this.config.access.createPolicy;
    if (policy === 'authenticated') return session.authenticated;
    return policy.some((s) => session.subjects.has(s));
  }
}
