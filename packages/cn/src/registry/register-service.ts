import { fail, type Logger, type Session } from '@memberkit/core';
import { AdapterError, type Node, type NodeList } from '@memberkit/types';
import type { SubjectDirectory } from '../ports.js';
import { normaliseSubject } from '../identity/subjects.js';
import type { NodeRegistry, RegistryConflict } from './node-registry.js';
import { nodeDocumentProblem, normaliseBaseUrl } from './registration-rules.js';

/** What CNRegister runs on. */
export interface CnRegisterDeps {
  registry: NodeRegistry;
  /** The CN's own Node document (as getCapabilities answers): listed first by listNodes. */
  selfNode(): Node | Promise<Node>;
  /** The CN's accounts: contact subjects must be verified ones. */
  subjects: SubjectDirectory;
  /** CN administrators (and the federation's CNs): may update any node, may register type="cn". */
  isAdministrator(session: Session): boolean;
  /** cn.registration */
  registration: { autoApprove: boolean; allowLoopback: boolean };
  logger: Logger;
}

/**
 * The document as the registry keeps it: the fields the CN owns (ping, lastHarvested,
 * lastCompleteHarvest) never taken from a submission, and an empty `<services/>` (which the
 * schema does not allow in an answer) left out.
 */
function withoutCnFields(node: Node): Node {
  const { ping: _ping, synchronization, services, ...rest } = node;
  return {
    ...rest,
    ...(services && services.service.length > 0 ? { services } : {}),
    ...(synchronization ? { synchronization: { schedule: synchronization.schedule } } : {}),
  };
}

/**
 * CNRegister (register, updateNodeCapabilities, getNodeCapabilities) and CNCore.listNodes over
 * the node registry. Registration is open to any authenticated caller; a new node waits for
 * an administrator's approval (`memberkit cn approve-node`, or cn.registration.autoApprove)
 * before listNodes shows it, so Member Nodes never take an unreviewed entry's subject for a
 * peer (a memberkit MN reads the CN subjects of listNodes).
 */
export class CnRegisterService {
  constructor(private readonly deps: CnRegisterDeps) {}

  /** "nodeList of all registered nodes": the CN itself, then the approved nodes. */
  async listNodes(): Promise<NodeList> {
    const self = await this.deps.selfNode();
    const approved = await this.deps.registry.list();
    return { node: [self, ...approved.map((e) => e.node).filter((n) => n.identifier !== self.identifier)] };
  }

  /** The registered document of `nodeId` (approved or not), or the CN's own. */
  async getNodeCapabilities(nodeId: string): Promise<Node> {
    const self = await this.deps.selfNode();
    if (nodeId === self.identifier) return self;
    const entry = await this.deps.registry.get(nodeId);
    if (!entry) throw fail('CNRegister.getNodeCapabilities', 'NotFound', `no node '${nodeId}' is registered with this Coordinating Node (listNodes names the registered ones)`);
    return entry.node;
  }

  /**
   * "identifier of the new node entry; an existing node gives IdentifierNotUnique". A session
   * is needed; the document must pass the registration rules (registration-rules.ts); its
   * contact subjects must be verified accounts of this CN; identifier and baseURL must be new.
   */
  async register(session: Session, submitted: Node): Promise<string> {
    const op = 'CNRegister.register';
    this.requireSession(op, session);
    const problem = nodeDocumentProblem(submitted, this.deps.registration);
    if (problem) throw fail(op, 'InvalidRequest', problem);
    if (submitted.type !== 'mn' && !this.deps.isAdministrator(session)) {
      throw fail(op, 'NotAuthorized', `only a CN administrator registers a node of type "${submitted.type}" (Member Nodes register with type="mn")`);
    }
    const self = await this.deps.selfNode();
    if (submitted.identifier === self.identifier) throw fail(op, 'IdentifierNotUnique', `'${submitted.identifier}' is this Coordinating Node's own identifier; choose another node identifier`);
    if (normaliseBaseUrl(submitted.baseURL) === normaliseBaseUrl(self.baseURL)) throw fail(op, 'IdentifierNotUnique', `the baseURL '${submitted.baseURL}' is this Coordinating Node's own`);
    await this.checkContacts(op, submitted);
    const node = withoutCnFields(submitted);
    const conflict = await storable(op, this.deps.registry.insert({ node, registeredBy: session.subject, approved: this.deps.registration.autoApprove }));
    if (conflict) throw fail(op, 'IdentifierNotUnique', conflictText(conflict, submitted));
    this.deps.logger.info({ node: node.identifier, baseURL: node.baseURL, by: session.subject, approved: this.deps.registration.autoApprove }, 'node registered');
    return node.identifier;
  }

  /**
   * "the new node replaces most data, but identifier, node type, ping, lastHarvested and
   * lastCompleteHarvest are kept from the old entry; services missing from the new node are
   * removed." The caller is one of the node's subjects or a CN administrator; the document
   * passes the same rules as at registration; approval is kept.
   */
  async updateNodeCapabilities(session: Session, nodeId: string, submitted: Node): Promise<void> {
    const op = 'CNRegister.updateNodeCapabilities';
    this.requireSession(op, session);
    const self = await this.deps.selfNode();
    if (nodeId === self.identifier) throw fail(op, 'InvalidRequest', `'${nodeId}' is this Coordinating Node: its node document comes from its configuration`);
    const existing = await this.deps.registry.get(nodeId);
    if (!existing) throw fail(op, 'NotFound', `no node '${nodeId}' is registered with this Coordinating Node; register it first`);
    const old = existing.node;
    if (!this.deps.isAdministrator(session) && !old.subject.some((s) => session.subjects.has(s))) {
      throw fail(op, 'NotAuthorized', `only the node's subjects (${old.subject.join('; ')}) or a CN administrator may update ${nodeId}; the caller is ${session.subject}`);
    }
    if (submitted.identifier !== nodeId) throw fail(op, 'InvalidRequest', `the document's identifier '${submitted.identifier}' is not the node being updated ('${nodeId}'); a node's identifier never changes`);
    const problem = nodeDocumentProblem(submitted, this.deps.registration);
    if (problem) throw fail(op, 'InvalidRequest', problem);
    if (normaliseBaseUrl(submitted.baseURL) === normaliseBaseUrl(self.baseURL)) throw fail(op, 'InvalidRequest', `the baseURL '${submitted.baseURL}' is this Coordinating Node's own`);
    await this.checkContacts(op, submitted);
    const fresh = withoutCnFields(submitted);
    const kept: Node = {
      ...fresh,
      identifier: old.identifier,
      type: old.type,
      ...(old.ping ? { ping: old.ping } : {}),
      ...(fresh.synchronization
        ? {
            synchronization: {
              schedule: fresh.synchronization.schedule,
              ...(old.synchronization?.lastHarvested ? { lastHarvested: old.synchronization.lastHarvested } : {}),
              ...(old.synchronization?.lastCompleteHarvest ? { lastCompleteHarvest: old.synchronization.lastCompleteHarvest } : {}),
            },
          }
        : {}),
    };
    const result = await storable(op, this.deps.registry.replace(nodeId, kept));
    if (result === 'missing') throw fail(op, 'NotFound', `no node '${nodeId}' is registered with this Coordinating Node`);
    if (result !== 'replaced') throw fail(op, 'InvalidRequest', conflictText(result, submitted));
    this.deps.logger.info({ node: nodeId, by: session.subject }, 'node capabilities updated');
  }

  /** register and updateNodeCapabilities need a session: checked before the body is read, and again by the operation. */
  requireSession(op: 'CNRegister.register' | 'CNRegister.updateNodeCapabilities', session: Session): void {
    if (session.authenticated) return;
    throw fail(op, 'NotAuthorized', op === 'CNRegister.register'
      ? 'register needs an authenticated caller: present a certificate or a bearer token (e.g. from `memberkit cn token`)'
      : "updateNodeCapabilities needs an authenticated caller: the node's own subject or a CN administrator");
  }

  /** Contact subjects must be people with a verified account here ("contact subjects must be verified accounts"). */
  private async checkContacts(op: 'CNRegister.register' | 'CNRegister.updateNodeCapabilities', node: Node): Promise<void> {
    for (const contact of node.contactSubject) {
      const info = await this.deps.subjects.lookup(contact);
      const person = info?.person.find((p) => p.subject === contact || p.subject === normaliseSubject(contact));
      if (!person) throw fail(op, 'InvalidRequest', `the contact subject '${contact}' has no account on this Coordinating Node: register it (registerAccount, POST /accounts) and have a CN administrator verify it`);
      if (person.verified !== true) throw fail(op, 'InvalidRequest', `the contact subject '${contact}' is not verified yet: a CN administrator verifies the account (verifyAccount) before it can be a node's contact`);
    }
  }
}

/** A document the schema cannot hold (NodeRegistry's 'invalid') is the caller's to fix. */
async function storable<T>(op: 'CNRegister.register' | 'CNRegister.updateNodeCapabilities', write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (err) {
    if (AdapterError.is(err) && err.kind === 'invalid') throw fail(op, 'InvalidRequest', err.message);
    throw err;
  }
}

function conflictText(conflict: RegistryConflict, node: Node): string {
  return conflict.field === 'identifier'
    ? `a node '${node.identifier}' is already registered; choose another identifier, or send updateNodeCapabilities (PUT /node/{id}) to change its document`
    : `the baseURL '${node.baseURL}' is already registered by node '${conflict.holder}'`;
}
