import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Busboy } from '@fastify/busboy';
import {
  createException,
  exceptionFromXml,
  IdentifierCodec,
  NodeCodec,
  NodeListCodec,
  SubjectInfoCodec,
  SystemMetadataCodec,
  type DataONEException,
  type ExceptionName,
  type Node,
  type SubjectInfo,
  type SystemMetadata,
} from '@memberkit/types';

/** A replication status report a Member Node sent (setReplicationStatus). */
export interface ReplicationReport {
  pid: string;
  nodeRef: string;
  status: string;
  failure?: DataONEException;
  at: Date;
}

export interface CoordinatingNodeStub {
  /** Base URL without the version, e.g. `http://127.0.0.1:PORT/cn`. */
  baseUrl: string;
  nodeId: string;
  subject: string;
  /** Registered nodes (listNodes answers these plus the CN itself). */
  nodes: Map<string, Node>;
  /** Authoritative system metadata by PID (getSystemMetadata). */
  systemMetadata: Map<string, SystemMetadata>;
  /** Reservations: identifier → subject (hasReservation). */
  reservations: Map<string, string>;
  /** Which node subjects may replicate which PIDs (isNodeAuthorized): `${pid}\n${subject}`. */
  replicationAuthorizations: Set<string>;
  /** SubjectInfo documents by subject (getSubjectInfo). */
  subjectInfo: Map<string, SubjectInfo>;
  replicationReports: ReplicationReport[];
  /** Every request, for assertions on what the node asked ("METHOD /path?query"). */
  requests: string[];
  /** Resolves when a report for `pid` with `status` arrives. */
  waitForReplicationStatus(pid: string, status: string, timeoutMs?: number): Promise<ReplicationReport>;
  stop(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: string, type = 'text/xml; charset=utf-8'): void {
  res.writeHead(status, { 'Content-Type': type }).end(body);
}

function error(res: ServerResponse, name: ExceptionName, description: string, detailCode = '0'): void {
  const e = createException(name, { description, detailCode });
  send(res, e.errorCode, e.toXml());
}

function parts(req: IncomingMessage): Promise<Map<string, string>> {
  return new Promise((resolve, reject) => {
    const out = new Map<string, string>();
    const bb = Busboy({ headers: req.headers as { 'content-type': string } });
    bb.on('field', (name, value) => out.set(name, value));
    bb.on('file', (name, stream) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => out.set(name, Buffer.concat(chunks).toString('utf8')));
    });
    bb.on('finish', () => resolve(out));
    bb.on('error', reject);
    req.pipe(bb);
  });
}

/**
 * A Coordinating Node good enough for federation tests: node registry, authoritative system
 * metadata, replication status reports and authorizations, reservations, subject info.
 * It trusts every caller (it is a test double for flows, not for CN security).
 */
export async function startCoordinatingNodeStub(options: { nodeId?: string; subject?: string } = {}): Promise<CoordinatingNodeStub> {
  const nodeId = options.nodeId ?? 'urn:node:CNSTUB';
  const subject = options.subject ?? 'CN=urn:node:CNSTUB,DC=dataone,DC=org';
  const waiters: Array<{ pid: string; status: string; resolve: (r: ReplicationReport) => void }> = [];
  let baseUrl = '';

  const stub: Omit<CoordinatingNodeStub, 'baseUrl' | 'stop'> = {
    nodeId,
    subject,
    nodes: new Map(),
    systemMetadata: new Map(),
    reservations: new Map(),
    replicationAuthorizations: new Set(),
    subjectInfo: new Map(),
    replicationReports: [],
    requests: [],
    waitForReplicationStatus(pid, status, timeoutMs = 30_000) {
      const found = stub.replicationReports.find((r) => r.pid === pid && r.status === status);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no '${status}' report for '${pid}' within ${timeoutMs} ms (reports: ${JSON.stringify(stub.replicationReports.map((r) => [r.pid, r.status]))})`)), timeoutMs);
        waiters.push({ pid, status, resolve: (r) => (clearTimeout(t), resolve(r)) });
      });
    },
  };

  const selfNode = (): Node => ({
    replicate: false, synchronize: false, type: 'cn', state: 'up', identifier: nodeId, name: 'CN stub', description: 'test Coordinating Node',
    baseURL: baseUrl, subject: [subject], contactSubject: [subject], property: [],
    services: { service: ['CNCore', 'CNRead', 'CNReplication', 'CNIdentity', 'CNRegister'].map((name) => ({ name, version: 'v2', available: true, restriction: [] })) },
  });

  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://stub');
      stub.requests.push(`${req.method} ${url.pathname}${url.search}`);
      const m = /^\/cn\/(v1|v2)(\/.*)?$/.exec(url.pathname);
      if (!m) return error(res, 'NotFound', `no such path ${url.pathname}`);
      const version = m[1] as 'v1' | 'v2';
      const path = m[2] ?? '/';
      const seg = (prefix: string) => (path.startsWith(prefix) ? decodeURIComponent(path.slice(prefix.length)) : undefined);
      try {
        if (req.method === 'GET' && (path === '/node' || path === '/')) {
          return send(res, 200, NodeListCodec.encode({ node: [selfNode(), ...stub.nodes.values()] }, version));
        }
        if (req.method === 'GET' && seg('/node/') !== undefined) {
          const n = seg('/node/') === nodeId ? selfNode() : stub.nodes.get(seg('/node/')!);
          return n ? send(res, 200, NodeCodec.encode(n, version)) : error(res, 'NotFound', 'no such node', '4842');
        }
        if (req.method === 'POST' && path === '/node') {
          const node = NodeCodec.decode((await parts(req)).get('node') ?? '');
          if (stub.nodes.has(node.identifier)) return error(res, 'IdentifierNotUnique', `node ${node.identifier} is already registered`, '4844');
          stub.nodes.set(node.identifier, node);
          return send(res, 200, IdentifierCodec.encode(node.identifier, version));
        }
        if (req.method === 'PUT' && seg('/node/') !== undefined) {
          const id = seg('/node/')!;
          if (!stub.nodes.has(id)) return error(res, 'NotFound', 'no such node', '4822');
          const node = NodeCodec.decode((await parts(req)).get('node') ?? '');
          stub.nodes.set(id, { ...node, identifier: id });
          return send(res, 200, 'true', 'text/plain');
        }
        if (req.method === 'GET' && seg('/meta/') !== undefined) {
          const sm = stub.systemMetadata.get(seg('/meta/')!);
          return sm ? send(res, 200, SystemMetadataCodec.encode(sm, version)) : error(res, 'NotFound', 'no such object', '1060');
        }
        if (req.method === 'PUT' && seg('/replicaNotifications/') !== undefined) {
          const pid = seg('/replicaNotifications/')!;
          const p = await parts(req);
          const failureXml = p.get('failure');
          const report: ReplicationReport = {
            pid, nodeRef: p.get('nodeRef') ?? '', status: p.get('status') ?? '', at: new Date(),
            ...(failureXml ? { failure: exceptionFromXml(failureXml) } : {}),
          };
          stub.replicationReports.push(report);
          for (const w of waiters.filter((x) => x.pid === pid && x.status === report.status)) w.resolve(report);
          return send(res, 200, 'true', 'text/plain');
        }
        if (req.method === 'GET' && seg('/replicaAuthorizations/') !== undefined) {
          const pid = seg('/replicaAuthorizations/')!;
          const target = url.searchParams.get('targetNodeSubject') ?? '';
          return stub.replicationAuthorizations.has(`${pid}\n${target}`)
            ? send(res, 200, 'true', 'text/plain')
            : error(res, 'NotAuthorized', `'${target}' may not replicate '${pid}'`, '4871');
        }
        if (req.method === 'GET' && seg('/reserve/') !== undefined) {
          const id = seg('/reserve/')!;
          const owner = stub.reservations.get(id);
          const who = url.searchParams.get('subject') ?? '';
          if (owner === undefined) return error(res, 'NotFound', `'${id}' is not reserved`, '4180');
          return owner === who ? send(res, 200, 'true', 'text/plain') : error(res, 'NotAuthorized', `'${id}' is reserved by another subject`, '4182');
        }
        if (req.method === 'POST' && path === '/reserve') {
          const id = (await parts(req)).get('id') ?? '';
          stub.reservations.set(id, req.headers['x-test-subject']?.toString() ?? 'public');
          return send(res, 200, IdentifierCodec.encode(id, version));
        }
        if (req.method === 'GET' && seg('/accounts/') !== undefined) {
          const info = stub.subjectInfo.get(seg('/accounts/')!);
          return info ? send(res, 200, SubjectInfoCodec.encode(info, version)) : error(res, 'NotFound', 'no such subject', '4564');
        }
        return error(res, 'NotImplemented', `the CN stub does not implement ${req.method} ${path}`);
      } catch (err) {
        return error(res, 'ServiceFailure', `CN stub: ${(err as Error).message}`);
      }
    })();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/cn`;
  return {
    ...stub,
    baseUrl,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  } as CoordinatingNodeStub;
}
