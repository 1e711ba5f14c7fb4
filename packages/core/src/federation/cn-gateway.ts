import { CoordinatingNodeClient, MemberNodeClient } from '@memberkit/client';
import { DataONEException, type NodeList, type SystemMetadata } from '@memberkit/types';
import type { FederationConfig } from './federation-config.js';

/**
 * Everything the node asks of the Coordinating Node, in one place, with the node list
 * cached: base URLs of other nodes, replication status reports, node authorization,
 * authoritative system metadata, identifier reservations.
 */
export class CnGateway {
  readonly cn: CoordinatingNodeClient;
  private nodeList: { at: number; list: NodeList } | undefined;

  constructor(private readonly config: FederationConfig) {
    this.cn = new CoordinatingNodeClient({ baseUrl: config.cnBaseUrl, version: 'v2', ...this.credentials(), retries: 2 });
  }

  private credentials() {
    const c = this.config.credentials ?? {};
    return {
      ...(c.token ? { token: c.token } : {}),
      ...(c.certificate ? { certificate: c.certificate } : {}),
      ...(c.ca ? { ca: c.ca } : {}),
    };
  }

  async nodes(): Promise<NodeList> {
    const ttl = this.config.nodeListTtlMs ?? 600_000;
    if (!this.nodeList || Date.now() - this.nodeList.at > ttl) this.nodeList = { at: Date.now(), list: await this.cn.listNodes() };
    return this.nodeList.list;
  }

  /** Subjects of the federation's Coordinating Nodes, from the node list. */
  async cnSubjects(): Promise<string[]> {
    return (await this.nodes()).node.filter((n) => n.type === 'cn').flatMap((n) => n.subject);
  }

  /** The entry of `nodeId` in the CN's node list; a miss re-reads the list once (a node registered since). */
  private async findNode(nodeId: string): Promise<NodeList['node'][number] | undefined> {
    let node = (await this.nodes()).node.find((n) => n.identifier === nodeId);
    if (!node) {
      this.nodeList = undefined;
      node = (await this.nodes()).node.find((n) => n.identifier === nodeId);
    }
    return node;
  }

  /** True when `nodeId` is in the CN's node list. */
  async knowsNode(nodeId: string): Promise<boolean> {
    return (await this.findNode(nodeId)) !== undefined;
  }

  /** A client for another Member Node, found by its node id in the CN's node list. */
  async memberNode(nodeId: string): Promise<MemberNodeClient> {
    const node = await this.findNode(nodeId);
    if (!node) throw new Error(`node '${nodeId}' is not in the Coordinating Node's node list`);
    const v2 = node.services?.service.some((s) => s.name === 'MNRead' && s.version === 'v2') ?? true;
    return new MemberNodeClient({ baseUrl: node.baseURL, version: v2 ? 'v2' : 'v1', ...this.credentials(), retries: 2, timeoutMs: 120_000 });
  }

  async setReplicationStatus(pid: string, nodeId: string, status: 'completed' | 'failed' | 'requested' | 'queued', failure?: DataONEException): Promise<void> {
    await this.cn.setReplicationStatus(pid, nodeId, status, failure);
  }

  /** True when the CN says `subject` (a node) may replicate `pid`; false on NotAuthorized/NotFound. */
  async isNodeAuthorized(pid: string, subject: string): Promise<boolean> {
    try {
      await this.cn.isNodeAuthorized(pid, subject);
      return true;
    } catch (err) {
      if (DataONEException.is(err) && (err.exceptionName === 'NotAuthorized' || err.exceptionName === 'NotFound' || err.exceptionName === 'InvalidRequest')) return false;
      throw err;
    }
  }

  getSystemMetadata(pid: string): Promise<SystemMetadata> {
    return this.cn.getSystemMetadata(pid);
  }

  /**
   * Reservation check for create/update: 'mine' (reserved by `subject`), 'none' (nobody
   * reserved it), 'other' (reserved by someone else).
   */
  async reservation(id: string, subject: string): Promise<'mine' | 'none' | 'other'> {
    try {
      await this.cn.hasReservation(id, subject);
      return 'mine';
    } catch (err) {
      if (DataONEException.is(err)) {
        if (err.exceptionName === 'NotFound') return 'none';
        if (err.exceptionName === 'NotAuthorized') return 'other';
      }
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.cn.close();
  }
}
