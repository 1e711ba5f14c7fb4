import {
  AccessPolicyCodec,
  ChecksumAlgorithmListCodec,
  GroupCodec,
  IdentifierCodec,
  NodeCodec,
  NodeReferenceCodec,
  NodeListCodec,
  ObjectFormatCodec,
  ObjectFormatListCodec,
  ObjectLocationListCodec,
  PersonCodec,
  ReplicaCodec,
  ReplicationPolicyCodec,
  SubjectInfoCodec,
  SystemMetadataCodec,
  type AccessPolicy,
  type ChecksumAlgorithmList,
  type Group,
  type Node,
  type NodeList,
  type ObjectFormat,
  type ObjectFormatList,
  type ObjectLocationList,
  type Person,
  type Replica,
  type ReplicationPolicy,
  type ReplicationStatus,
  type DataONEException,
  type SubjectInfo,
  type SystemMetadata,
} from '@memberkit/types';
import { MemberNodeClient } from './member-node-client.js';
import { segment } from './transport.js';

/**
 * A typed client for every Coordinating Node operation (CNCore, CNRead, CNAuthorization,
 * CNIdentity, CNReplication, CNRegister, CNDiagnostic, CNView). The read operations a CN
 * shares with Member Nodes (get, describe, getSystemMetadata, listObjects, getLogRecords,
 * isAuthorized, query, views) are inherited.
 */
export class CoordinatingNodeClient extends MemberNodeClient {
  // CNCore
  async listNodes(signal?: AbortSignal): Promise<NodeList> {
    return NodeListCodec.decode(await this.xml({ method: 'GET', path: '/node' }, signal));
  }
  async listFormats(signal?: AbortSignal): Promise<ObjectFormatList> {
    return ObjectFormatListCodec.decode(await this.xml({ method: 'GET', path: '/formats' }, signal));
  }
  async getFormat(formatId: string, signal?: AbortSignal): Promise<ObjectFormat> {
    return ObjectFormatCodec.decode(await this.xml({ method: 'GET', path: `/formats/${segment(formatId)}` }, signal));
  }
  async listChecksumAlgorithms(signal?: AbortSignal): Promise<ChecksumAlgorithmList> {
    return ChecksumAlgorithmListCodec.decode(await this.xml({ method: 'GET', path: '/checksum' }, signal));
  }
  async reserveIdentifier(id: string, signal?: AbortSignal): Promise<string> {
    return this.identifier({ method: 'POST', path: '/reserve', parts: [{ name: 'id', value: id }] }, signal);
  }
  /** hasReservation: true when `id` is reserved by `subject`; otherwise the CN's exception is thrown. */
  async hasReservation(id: string, subject: string, signal?: AbortSignal): Promise<true> {
    return this.ok({ method: 'GET', path: `/reserve/${segment(id)}`, query: { subject } }, signal);
  }
  async registerSystemMetadata(pid: string, sysmeta: SystemMetadata, signal?: AbortSignal): Promise<string> {
    return this.identifier({ method: 'POST', path: '/meta', parts: [{ name: 'pid', value: pid }, { name: 'sysmeta', value: SystemMetadataCodec.encode(sysmeta, this.version), fileName: 'sysmeta.xml' }] }, signal);
  }
  async setObsoletedBy(pid: string, obsoletedByPid: string, serialVersion: number, signal?: AbortSignal): Promise<true> {
    return this.ok({ method: 'PUT', path: `/obsoletedBy/${segment(pid)}`, parts: [{ name: 'obsoletedByPid', value: obsoletedByPid }, { name: 'serialVersion', value: String(serialVersion) }] }, signal);
  }

  // CNRead
  async resolve(id: string, signal?: AbortSignal): Promise<ObjectLocationList> {
    return ObjectLocationListCodec.decode(await this.xml({ method: 'GET', path: `/resolve/${segment(id)}` }, signal));
  }
  async synchronize(pid: string, signal?: AbortSignal): Promise<true> {
    return this.ok({ method: 'POST', path: '/synchronize', parts: [{ name: 'pid', value: pid }] }, signal);
  }
  async search(queryType: string, query: string, signal?: AbortSignal) {
    return this.stream(await this.http.send({ method: 'GET', path: `/search/${segment(queryType)}/${query}` }, signal));
  }

  // CNAuthorization
  async setAccessPolicy(id: string, accessPolicy: AccessPolicy, serialVersion: number, signal?: AbortSignal): Promise<true> {
    return this.ok({ method: 'PUT', path: `/accessRules/${segment(id)}`, parts: [{ name: 'accessPolicy', value: AccessPolicyCodec.encode(accessPolicy, 'v1'), fileName: 'accessPolicy.xml' }, { name: 'serialVersion', value: String(serialVersion) }] }, signal);
  }
  async setRightsHolder(id: string, userId: string, serialVersion: number, signal?: AbortSignal): Promise<string> {
    return this.identifier({ method: 'PUT', path: `/owner/${segment(id)}`, parts: [{ name: 'userId', value: userId }, { name: 'serialVersion', value: String(serialVersion) }] }, signal);
  }

  // CNIdentity
  async registerAccount(person: Person, signal?: AbortSignal): Promise<string> {
    return this.xmlSubject({ method: 'POST', path: '/accounts', parts: [{ name: 'person', value: PersonCodec.encode(person, 'v1'), fileName: 'person.xml' }] }, signal);
  }
  async updateAccount(subject: string, person: Person, signal?: AbortSignal): Promise<string> {
    return this.xmlSubject({ method: 'PUT', path: `/accounts/${segment(subject)}`, parts: [{ name: 'person', value: PersonCodec.encode(person, 'v1'), fileName: 'person.xml' }] }, signal);
  }
  async verifyAccount(subject: string, signal?: AbortSignal): Promise<true> {
    return this.ok({ method: 'PUT', path: `/accounts/verification/${segment(subject)}` }, signal);
  }
  async getSubjectInfo(subject: string, signal?: AbortSignal): Promise<SubjectInfo> {
    return SubjectInfoCodec.decode(await this.xml({ method: 'GET', path: `/accounts/${segment(subject)}` }, signal));
  }
  async listSubjects(q: { query?: string; status?: string; start?: number; count?: number } = {}, signal?: AbortSignal): Promise<SubjectInfo> {
    return SubjectInfoCodec.decode(await this.xml({ method: 'GET', path: '/accounts', query: q }, signal));
  }
  async createGroup(group: Group, signal?: AbortSignal): Promise<string> {
    return this.xmlSubject({ method: 'POST', path: '/groups', parts: [{ name: 'group', value: GroupCodec.encode(group, 'v1'), fileName: 'group.xml' }] }, signal);
  }
  async updateGroup(group: Group, signal?: AbortSignal): Promise<true> {
    return this.ok({ method: 'PUT', path: '/groups', parts: [{ name: 'group', value: GroupCodec.encode(group, 'v1'), fileName: 'group.xml' }] }, signal);
  }
  async mapIdentity(primarySubject: string, secondarySubject: string, signal?: AbortSignal): Promise<true> {
    return this.ok({ method: 'POST', path: '/accounts/map', parts: [{ name: 'primarySubject', value: primarySubject }, { name: 'secondarySubject', value: secondarySubject }] }, signal);
  }
  async requestMapIdentity(subject: string, signal?: AbortSignal): Promise<true> {
    return this.ok({ method: 'POST', path: '/accounts/pendingmap', parts: [{ name: 'subject', value: subject }] }, signal);
  }
  async confirmMapIdentity(subject: string, signal?: AbortSignal): Promise<true> {
    return this.ok({ method: 'PUT', path: `/accounts/pendingmap/${segment(subject)}` }, signal);
  }
  async denyMapIdentity(subject: string, signal?: AbortSignal): Promise<true> {
    return this.ok({ method: 'DELETE', path: `/accounts/pendingmap/${segment(subject)}` }, signal);
  }
  async getPendingMapIdentity(subject: string, signal?: AbortSignal): Promise<SubjectInfo> {
    return SubjectInfoCodec.decode(await this.xml({ method: 'GET', path: `/accounts/pendingmap/${segment(subject)}` }, signal));
  }
  async removeMapIdentity(subject: string, signal?: AbortSignal): Promise<true> {
    return this.ok({ method: 'DELETE', path: `/accounts/map/${segment(subject)}` }, signal);
  }

  // CNReplication
  async setReplicationStatus(pid: string, nodeRef: string, status: ReplicationStatus, failure?: DataONEException, signal?: AbortSignal): Promise<true> {
    return this.ok({
      method: 'PUT',
      path: `/replicaNotifications/${segment(pid)}`,
      parts: [{ name: 'nodeRef', value: nodeRef }, { name: 'status', value: status }, ...(failure ? [{ name: 'failure', value: failure.toXml(), fileName: 'failure.xml' }] : [])],
    }, signal);
  }
  /** isNodeAuthorized: true when the target node may replicate `pid`; otherwise the CN's exception is thrown. */
  async isNodeAuthorized(pid: string, targetNodeSubject: string, signal?: AbortSignal): Promise<true> {
    return this.ok({ method: 'GET', path: `/replicaAuthorizations/${segment(pid)}`, query: { targetNodeSubject } }, signal);
  }
  async updateReplicationMetadata(pid: string, replica: Replica, serialVersion: number, signal?: AbortSignal): Promise<true> {
    return this.ok({ method: 'PUT', path: `/replicaMetadata/${segment(pid)}`, parts: [{ name: 'replicaMetadata', value: ReplicaCodec.encode(replica, 'v1'), fileName: 'replica.xml' }, { name: 'serialVersion', value: String(serialVersion) }] }, signal);
  }
  async setReplicationPolicy(id: string, policy: ReplicationPolicy, serialVersion: number, signal?: AbortSignal): Promise<true> {
    return this.ok({ method: 'PUT', path: `/replicaPolicies/${segment(id)}`, parts: [{ name: 'policy', value: ReplicationPolicyCodec.encode(policy, 'v1'), fileName: 'policy.xml' }, { name: 'serialVersion', value: String(serialVersion) }] }, signal);
  }
  async deleteReplicationMetadata(pid: string, nodeId: string, serialVersion: number, signal?: AbortSignal): Promise<true> {
    return this.ok({ method: 'PUT', path: `/removeReplicaMetadata/${segment(pid)}`, parts: [{ name: 'nodeId', value: nodeId }, { name: 'serialVersion', value: String(serialVersion) }] }, signal);
  }

  // CNRegister
  async getNodeCapabilities(nodeId: string, signal?: AbortSignal): Promise<Node> {
    return NodeCodec.decode(await this.xml({ method: 'GET', path: `/node/${segment(nodeId)}` }, signal));
  }
  /** The new entry's node reference: a NodeReference document (an Identifier document, as older stubs answer, is read too). */
  async register(node: Node, signal?: AbortSignal): Promise<string> {
    const text = await this.xml({ method: 'POST', path: '/node', parts: [{ name: 'node', value: NodeCodec.encode(node, this.version), fileName: 'node.xml' }] }, signal);
    if (!text.trimStart().startsWith('<')) return text.trim();
    return /<([\w.-]+:)?nodeReference[\s>]/.test(text) ? NodeReferenceCodec.decode(text) : IdentifierCodec.decode(text);
  }
  async updateNodeCapabilities(nodeId: string, node: Node, signal?: AbortSignal): Promise<true> {
    return this.ok({ method: 'PUT', path: `/node/${segment(nodeId)}`, parts: [{ name: 'node', value: NodeCodec.encode(node, this.version), fileName: 'node.xml' }] }, signal);
  }

  // CNDiagnostic
  async echoCredentials(signal?: AbortSignal): Promise<SubjectInfo> {
    return SubjectInfoCodec.decode(await this.xml({ method: 'GET', path: '/diag/subject' }, signal));
  }
  async echoSystemMetadata(sysmeta: SystemMetadata, signal?: AbortSignal): Promise<SystemMetadata> {
    return SystemMetadataCodec.decode(await this.xml({ method: 'POST', path: '/diag/sysmeta', parts: [{ name: 'sysmeta', value: SystemMetadataCodec.encode(sysmeta, 'v2'), fileName: 'sysmeta.xml' }] }, signal));
  }

  /** Subject answers are Subject documents (or bare text). */
  private async xmlSubject(spec: Parameters<MemberNodeClient['xml']>[0], signal?: AbortSignal): Promise<string> {
    const text = (await this.xml(spec, signal)).trim();
    const m = /<(?:\w+:)?subject[^>]*>([\s\S]*?)<\/(?:\w+:)?subject>/.exec(text);
    return m ? m[1]!.trim() : text;
  }
}
