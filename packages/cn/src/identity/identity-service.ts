import { fail, type Session } from '@memberkit/core';
import type { Group, Person, SubjectInfo } from '@memberkit/types';
import type { AccountRecord, IdentityStore } from './identity-store.js';
import { groupOf, type SqlSubjectDirectory } from './subject-directory.js';
import { accountSubjectProblem, normaliseSubject, subjectKind, subjectProblem } from './subjects.js';

export interface IdentityServiceOptions {
  /** CN administrators (access.administrators): every identity operation, every e-mail address. */
  administrators: readonly string[];
  /**
   * Also an administrator when this says so (the CN passes AccessControl.isPrivileged: its
   * administrators and the federation's CN subjects). Default: the `administrators` list only.
   */
  isAdministrator?: (session: Session) => boolean;
  /** Subjects allowed verifyAccount besides administrators (cn.identity.verifiers). */
  verifiers: readonly string[];
  /** Subjects allowed mapIdentity besides administrators (cn.identity.mappers). */
  mappers: readonly string[];
  /** Largest page listSubjects returns (default 1000). */
  maxPageSize?: number;
  now?: () => number;
}

/** listSubjects' parameters as the query string gives them. */
export interface ListSubjectsQuery {
  query?: string;
  status?: string;
  start: number;
  count?: number;
}

/** listSubjects' page size when the caller gives none (as the production CN). */
export const DEFAULT_LIST_SUBJECTS_COUNT = 100;

/** Who is calling, as the identity rules see it. */
interface Caller {
  /** The session's primary subject, normalised ('' for public). */
  subject: string;
  /** Every subject the caller acts as, normalised: expanded through the SubjectDirectory. */
  subjects: ReadonlySet<string>;
  authenticated: boolean;
  administrator: boolean;
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;

/**
 * CNIdentity: accounts, identity mappings and groups, with the API's authorization rules.
 * Subjects are normalised (identity/subjects.ts) before anything is compared or stored; the
 * caller's subjects come from the SubjectDirectory's `expand`, so an equivalent identity or a
 * group membership counts here as in every other CN decision.
 */
export class IdentityService {
  private readonly administrators: ReadonlySet<string>;
  private readonly verifiers: ReadonlySet<string>;
  private readonly mappers: ReadonlySet<string>;
  private readonly now: () => number;
  private readonly maxPageSize: number;
  private readonly isAdministrator: (session: Session) => boolean;

  constructor(
    private readonly identities: IdentityStore,
    private readonly directory: SqlSubjectDirectory,
    options: IdentityServiceOptions,
  ) {
    const set = (list: readonly string[]) => new Set(list.flatMap((s) => [s, normaliseSubject(s)]));
    this.administrators = set(options.administrators);
    this.verifiers = set(options.verifiers);
    this.mappers = set(options.mappers);
    this.now = options.now ?? Date.now;
    this.maxPageSize = options.maxPageSize ?? 1000;
    this.isAdministrator = options.isAdministrator ?? (() => false);
  }

  private async caller(session: Session): Promise<Caller> {
    if (!session.authenticated) return { subject: '', subjects: new Set(), authenticated: false, administrator: false };
    const subjects = new Set<string>();
    for (const s of session.subjects) subjects.add(normaliseSubject(s));
    for (const s of await this.directory.expand(session.subject)) subjects.add(s);
    return {
      subject: normaliseSubject(session.subject),
      subjects,
      authenticated: true,
      administrator: this.isAdministrator(session) || [...subjects].some((s) => this.administrators.has(s)),
    };
  }

  private requireAuthenticated(op: Parameters<typeof fail>[0], caller: Caller, what: string): void {
    if (!caller.authenticated) throw fail(op, 'NotAuthorized', `${what} needs an authenticated caller: present a client certificate or a bearer token`);
  }

  /** The Person of an account as `caller` may see it: e-mail addresses only for the person itself and administrators. */
  private redact(caller: Caller, persons: Person[]): Person[] {
    if (caller.administrator) return persons;
    return persons.map((p) => (caller.subjects.has(p.subject) ? p : { ...p, email: [] }));
  }

  /** A person's names and e-mail addresses as the service accepts them (trimmed, none empty). */
  private personFields(op: 'CNIdentity.registerAccount' | 'CNIdentity.updateAccount', person: Person): Pick<AccountRecord, 'givenName' | 'familyName' | 'email'> {
    const givenName = person.givenName.map((g) => g.trim());
    const familyName = person.familyName.trim();
    const email = [...new Set(person.email.map((e) => e.trim()))];
    if (givenName.length === 0 || givenName.some((g) => g === '')) throw fail(op, 'InvalidRequest', 'person/givenName must be given and must not be empty');
    if (familyName === '') throw fail(op, 'InvalidRequest', 'person/familyName must not be empty');
    const bad = email.find((e) => !EMAIL.test(e));
    if (bad !== undefined) throw fail(op, 'InvalidRequest', `person/email '${bad}' is not an e-mail address (name@domain)`);
    return { givenName, familyName, email };
  }

  /**
   * registerAccount: a new, unverified account for `person.subject`. The caller must be that
   * subject (or an equivalent identity of it) or an administrator. equivalentIdentity,
   * isMemberOf and verified in the person are ignored: mappings, groups and verification have
   * operations of their own.
   */
  async registerAccount(session: Session, person: Person): Promise<string> {
    const op = 'CNIdentity.registerAccount';
    const caller = await this.caller(session);
    this.requireAuthenticated(op, caller, 'registerAccount');
    const subject = normaliseSubject(person.subject);
    const problem = accountSubjectProblem(subject, 'person/subject');
    if (problem) throw fail(op, 'InvalidRequest', problem);
    if (!caller.administrator && !caller.subjects.has(subject)) {
      throw fail(op, 'NotAuthorized', `you (${caller.subject}) may register an account only for your own subject, not for '${subject}'`);
    }
    const now = this.now();
    const outcome = await this.identities.insertAccount({ subject, ...this.personFields(op, person), verified: false, created: now, updated: now });
    if (outcome === 'exists') throw fail(op, 'IdentifierNotUnique', `an account for '${subject}' is already registered; change it with updateAccount (PUT /accounts/{subject})`);
    if (outcome === 'group-exists') throw fail(op, 'IdentifierNotUnique', `'${subject}' is the subject of a group; an account cannot have it`);
    return subject;
  }

  /**
   * updateAccount: replaces the names and e-mail addresses of the account `subject` (the path
   * parameter; person.subject must name the same subject). Only the subject itself (or an
   * equivalent identity) and administrators may. A change of names or e-mail addresses makes
   * the account unverified again (verification vouches for them).
   */
  async updateAccount(session: Session, pathSubject: string, person: Person): Promise<string> {
    const op = 'CNIdentity.updateAccount';
    const caller = await this.caller(session);
    this.requireAuthenticated(op, caller, 'updateAccount');
    const subject = normaliseSubject(pathSubject);
    if (normaliseSubject(person.subject) !== subject) {
      throw fail(op, 'InvalidRequest', `person/subject '${person.subject}' differs from the subject of the path '${pathSubject}'; an account's subject cannot change`);
    }
    if (!caller.administrator && !caller.subjects.has(subject)) {
      throw fail(op, 'NotAuthorized', `you (${caller.subject}) may update only your own account, not '${subject}'`);
    }
    const fields = this.personFields(op, person);
    const current = await this.identities.getAccount(subject);
    if (!current) throw fail(op, 'NotFound', `no account is registered for '${subject}'; register it first (POST /accounts)`);
    const same = JSON.stringify([current.givenName, current.familyName, current.email]) === JSON.stringify([fields.givenName, fields.familyName, fields.email]);
    const updated = await this.identities.updateAccount({ subject, ...fields, verified: same && current.verified, updated: this.now() });
    if (!updated) throw fail(op, 'NotFound', `no account is registered for '${subject}'`);
    return subject;
  }

  /** verifyAccount: marks the account verified. Administrators and cn.identity.verifiers only. */
  async verifyAccount(session: Session, pathSubject: string): Promise<void> {
    const op = 'CNIdentity.verifyAccount';
    const caller = await this.caller(session);
    if (!caller.administrator && ![...caller.subjects].some((s) => this.verifiers.has(s))) {
      throw fail(op, 'NotAuthorized', `${caller.authenticated ? caller.subject : 'an anonymous caller'} may not verify accounts: only the CN's administrators and the subjects of cn.identity.verifiers may`);
    }
    const subject = normaliseSubject(pathSubject);
    const problem = subjectProblem(subject, 'the subject');
    if (problem) throw fail(op, 'InvalidRequest', problem);
    if (!(await this.identities.setVerified(subject, true, this.now()))) {
      throw fail(op, 'NotFound', `no account is registered for '${subject}'; it must be registered (POST /accounts) before it is verified`);
    }
  }

  /**
   * getSubjectInfo: the person (with its equivalent identities and groups) or the group (with
   * its members) named `subject`. Anyone may ask; e-mail addresses are shown only to the
   * person itself (or its equivalent identities) and administrators.
   */
  async getSubjectInfo(session: Session, pathSubject: string): Promise<SubjectInfo> {
    const op = 'CNIdentity.getSubjectInfo';
    const caller = await this.caller(session);
    const info = await this.directory.lookup(pathSubject);
    if (!info) throw fail(op, 'NotFound', `no account or group is known for '${normaliseSubject(pathSubject)}'`);
    return { person: this.redact(caller, info.person), group: info.group };
  }

  /**
   * listSubjects: accounts, then groups, whose subject or names contain `query` (case
   * insensitive; e-mail addresses too when an administrator asks), optionally only verified
   * or unverified accounts (`status`), paged by `start` and `count`.
   */
  async listSubjects(session: Session, q: ListSubjectsQuery): Promise<SubjectInfo> {
    const op = 'CNIdentity.listSubjects';
    const caller = await this.caller(session);
    let verified: boolean | undefined;
    if (q.status !== undefined) {
      const status = q.status.trim().toLowerCase();
      if (status !== 'verified' && status !== 'unverified') throw fail(op, 'InvalidRequest', `status must be 'verified' or 'unverified' (got '${q.status}')`);
      verified = status === 'verified';
    }
    const count = Math.min(q.count ?? DEFAULT_LIST_SUBJECTS_COUNT, this.maxPageSize);
    const query = q.query === undefined || q.query.trim() === '' ? undefined : normaliseSubject(q.query);
    const result = await this.identities.search({ ...(query !== undefined ? { query } : {}), ...(verified !== undefined ? { verified } : {}), matchEmail: caller.administrator, start: q.start, count });
    return { person: this.redact(caller, await this.directory.persons(result.accounts)), group: result.groups.map(groupOf) };
  }

  /** The account of `subject`, or NotFound naming what to do. */
  private async requireAccount(op: 'CNIdentity.mapIdentity' | 'CNIdentity.requestMapIdentity', subject: string, who: string): Promise<void> {
    if (!(await this.identities.getAccount(subject))) throw fail(op, 'NotFound', `${who} '${subject}' has no account; register it first (POST /accounts)`);
  }

  /**
   * mapIdentity: makes two accounts equivalent at once (no confirmation). Administrators and
   * cn.identity.mappers only.
   */
  async mapIdentity(session: Session, primarySubject: string, secondarySubject: string): Promise<void> {
    const op = 'CNIdentity.mapIdentity';
    const caller = await this.caller(session);
    if (!caller.administrator && ![...caller.subjects].some((s) => this.mappers.has(s))) {
      throw fail(op, 'NotAuthorized', `${caller.authenticated ? caller.subject : 'an anonymous caller'} may not map identities: only the CN's administrators and the subjects of cn.identity.mappers may (others use requestMapIdentity and confirmMapIdentity)`);
    }
    const primary = normaliseSubject(primarySubject);
    const secondary = normaliseSubject(secondarySubject);
    const problem = accountSubjectProblem(primary, 'primarySubject') ?? accountSubjectProblem(secondary, 'secondarySubject');
    if (problem) throw fail(op, 'InvalidRequest', problem);
    if (primary === secondary) throw fail(op, 'InvalidRequest', `primarySubject and secondarySubject are the same subject '${primary}'`);
    await this.requireAccount(op, primary, 'primarySubject');
    await this.requireAccount(op, secondary, 'secondarySubject');
    if ((await this.identities.addEquivalence(primary, secondary, this.now())) === 'exists') {
      throw fail(op, 'IdentifierNotUnique', `'${primary}' and '${secondary}' are already mapped to each other`);
    }
  }

  /**
   * requestMapIdentity: the caller asks that `subject` become an equivalent identity of its
   * own; `subject` confirms with confirmMapIdentity (or refuses with denyMapIdentity).
   */
  async requestMapIdentity(session: Session, targetSubject: string): Promise<void> {
    const op = 'CNIdentity.requestMapIdentity';
    const caller = await this.caller(session);
    this.requireAuthenticated(op, caller, 'requestMapIdentity');
    const requester = caller.subject;
    const target = normaliseSubject(targetSubject);
    const problem = accountSubjectProblem(target, 'subject');
    if (problem) throw fail(op, 'InvalidRequest', problem);
    if (target === requester) throw fail(op, 'InvalidRequest', `'${target}' is your own subject; name the other identity to map to yours`);
    await this.requireAccount(op, requester, 'your subject');
    await this.requireAccount(op, target, 'subject');
    const outcome = await this.identities.addRequest(requester, target, this.now());
    if (outcome === 'mapped') throw fail(op, 'IdentifierNotUnique', `'${requester}' and '${target}' are already mapped to each other`);
    if (outcome === 'exists') throw fail(op, 'IdentifierNotUnique', `your request to map '${target}' is already pending; '${target}' confirms it with PUT /accounts/pendingmap/{your subject}`);
    if (outcome === 'inverse') throw fail(op, 'InvalidRequest', `'${target}' already asked to be mapped to you: confirm that request with PUT /accounts/pendingmap/${encodeURIComponent(target)}`);
  }

  /**
   * getPendingMapIdentity: the mapping requests made by or naming `subject`, as SubjectInfo
   * (the person `subject` first, then the other party of each request). Only the two parties
   * of a request (or their equivalent identities) and administrators may read it.
   */
  async getPendingMapIdentity(session: Session, pathSubject: string): Promise<SubjectInfo> {
    const op = 'CNIdentity.getPendingMapIdentity';
    const caller = await this.caller(session);
    this.requireAuthenticated(op, caller, 'getPendingMapIdentity');
    const subject = normaliseSubject(pathSubject);
    const requests = await this.identities.requestsInvolving([subject]);
    if (requests.length === 0) throw fail(op, 'NotFound', `no identity mapping request made by or naming '${subject}' is pending`);
    const visible = requests.filter((r) => caller.administrator || caller.subjects.has(r.requester) || caller.subjects.has(r.target));
    if (visible.length === 0) throw fail(op, 'NotAuthorized', `only the two subjects of a mapping request (or an administrator) may read it; you are ${caller.subject}`);
    const others = visible.map((r) => (r.requester === subject ? r.target : r.requester));
    const accounts = await this.identities.getAccounts([subject, ...others]);
    const ordered = [...accounts.filter((a) => a.subject === subject), ...accounts.filter((a) => a.subject !== subject)];
    return { person: this.redact(caller, await this.directory.persons(ordered)), group: [] };
  }

  /**
   * confirmMapIdentity: the caller (the target of a request, or an equivalent identity of it)
   * accepts `subject`'s request: the two become equivalent identities. NotFound when no such
   * request is pending (the production CN answers ServiceFailure here; the API promises NotFound).
   */
  async confirmMapIdentity(session: Session, pathSubject: string): Promise<void> {
    const op = 'CNIdentity.confirmMapIdentity';
    const caller = await this.caller(session);
    this.requireAuthenticated(op, caller, 'confirmMapIdentity');
    const requester = normaliseSubject(pathSubject);
    const request = (await this.identities.requestsInvolving([requester])).find((r) => r.requester === requester && caller.subjects.has(r.target));
    if (!request || !(await this.identities.confirmRequest(request.requester, request.target, this.now()))) {
      throw fail(op, 'NotFound', `no request by '${requester}' to be mapped to you (${caller.subject}) is pending; '${requester}' asks first with requestMapIdentity`);
    }
  }

  /**
   * denyMapIdentity: the caller refuses `subject`'s pending request to be mapped to it, or
   * withdraws its own pending request naming `subject`. NotFound when there is neither.
   */
  async denyMapIdentity(session: Session, pathSubject: string): Promise<void> {
    const op = 'CNIdentity.denyMapIdentity';
    const caller = await this.caller(session);
    this.requireAuthenticated(op, caller, 'denyMapIdentity');
    const other = normaliseSubject(pathSubject);
    const requests = await this.identities.requestsInvolving([other]);
    const request =
      requests.find((r) => r.requester === other && caller.subjects.has(r.target)) ?? requests.find((r) => r.target === other && caller.subjects.has(r.requester));
    if (!request || !(await this.identities.removeRequest(request.requester, request.target))) {
      throw fail(op, 'NotFound', `no identity mapping request between '${other}' and you (${caller.subject}) is pending`);
    }
  }

  /**
   * removeMapIdentity: ends the equivalence between the caller (or an equivalent identity of
   * it) and `subject`; the reciprocal goes with it (one row holds both directions).
   */
  async removeMapIdentity(session: Session, pathSubject: string): Promise<void> {
    const op = 'CNIdentity.removeMapIdentity';
    const caller = await this.caller(session);
    this.requireAuthenticated(op, caller, 'removeMapIdentity');
    const other = normaliseSubject(pathSubject);
    const pairs = (await this.identities.equivalencesOf([other])).filter(([a, b]) => (a === other ? caller.subjects.has(b) : caller.subjects.has(a)));
    let removed = false;
    for (const [a, b] of pairs) if (await this.identities.removeEquivalence(a, b)) removed = true;
    if (!removed) throw fail(op, 'NotFound', `'${other}' is not mapped to you (${caller.subject}); nothing to remove`);
  }

  /** A group's subject, members and rightsHolders as stored (normalised, checked). */
  private groupFields(op: 'CNIdentity.createGroup' | 'CNIdentity.updateGroup', group: Group): Group {
    const subject = normaliseSubject(group.subject);
    const problem = subjectProblem(subject, 'group/subject');
    if (problem) throw fail(op, 'InvalidRequest', problem);
    if (subjectKind(subject) === 'orcid') throw fail(op, 'InvalidRequest', `group/subject '${subject}' is an ORCID, which names a person; name a group with a distinguished name (e.g. CN=my-group,DC=dataone,DC=org)`);
    const groupName = group.groupName.trim();
    if (groupName === '') throw fail(op, 'InvalidRequest', 'group/groupName must not be empty');
    const list = (values: readonly string[], what: string) =>
      [...new Set(values.map((v) => normaliseSubject(v)))].map((v) => {
        const p = subjectProblem(v, what);
        if (p) throw fail(op, 'InvalidRequest', p);
        if (v === subject) throw fail(op, 'InvalidRequest', `${what} '${v}' is the group itself`);
        return v;
      });
    return { subject, groupName, hasMember: list(group.hasMember, 'group/hasMember'), rightsHolder: list(group.rightsHolder, 'group/rightsHolder') };
  }

  /**
   * createGroup: a new group; its creator becomes one of its rightsHolders. Group subjects
   * are unique among groups and accounts (IdentifierNotUnique). A member cannot be a group.
   */
  async createGroup(session: Session, group: Group): Promise<string> {
    const op = 'CNIdentity.createGroup';
    const caller = await this.caller(session);
    this.requireAuthenticated(op, caller, 'createGroup');
    const fields = this.groupFields(op, group);
    const now = this.now();
    const rightsHolder = [...new Set([caller.subject, ...fields.rightsHolder])];
    const result = await this.identities.insertGroup({ ...fields, rightsHolder, creator: caller.subject, created: now, updated: now });
    if (result.outcome === 'exists') throw fail(op, 'IdentifierNotUnique', `a group '${fields.subject}' already exists; choose another subject, or change it with updateGroup (PUT /groups)`);
    if (result.outcome === 'account-exists') throw fail(op, 'IdentifierNotUnique', `'${fields.subject}' is the subject of an account; a group cannot have it`);
    if (result.outcome === 'member-is-group') throw fail(op, 'InvalidRequest', `group/hasMember '${result.member}' is a group; groups cannot be members of groups`);
    return fields.subject;
  }

  /**
   * updateGroup: replaces the group's name, members and rightsHolders. Only its creator, its
   * rightsHolders (or their equivalent identities and groups) and administrators may.
   */
  async updateGroup(session: Session, group: Group): Promise<void> {
    const op = 'CNIdentity.updateGroup';
    const caller = await this.caller(session);
    this.requireAuthenticated(op, caller, 'updateGroup');
    const fields = this.groupFields(op, group);
    const current = await this.identities.getGroup(fields.subject);
    if (!current) throw fail(op, 'NotFound', `no group '${fields.subject}' exists; create it with createGroup (POST /groups)`);
    const owners = [current.creator, ...current.rightsHolder];
    if (!caller.administrator && !owners.some((o) => caller.subjects.has(o))) {
      throw fail(op, 'NotAuthorized', `only the creator and the rightsHolders of '${fields.subject}' (or an administrator) may change it; you are ${caller.subject}`);
    }
    const result = await this.identities.replaceGroup({ ...fields, updated: this.now() });
    if (result.outcome === 'missing') throw fail(op, 'NotFound', `no group '${fields.subject}' exists`);
    if (result.outcome === 'member-is-group') throw fail(op, 'InvalidRequest', `group/hasMember '${result.member}' is a group; groups cannot be members of groups`);
  }

  /** echoCredentials: what the CN knows of the caller (its own record, e-mail included). */
  async echoCredentials(session: Session): Promise<SubjectInfo> {
    if (!session.authenticated) return { person: [], group: [] };
    return (await this.directory.lookup(session.subject)) ?? { person: [], group: [] };
  }
}
