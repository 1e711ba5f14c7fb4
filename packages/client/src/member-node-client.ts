import type { Readable } from 'node:stream';
import {
  ChecksumCodec,
  IdentifierCodec,
  LogCodec,
  NodeCodec,
  ObjectListCodec,
  OptionListCodec,
  QueryEngineDescriptionCodec,
  QueryEngineListCodec,
  SystemMetadataCodec,
  type Checksum,
  type DataONEException,
  type Log,
  type Node,
  type ObjectList,
  type OptionList,
  type Permission,
  type QueryEngineDescription,
  type QueryEngineList,
  type SystemMetadata,
} from '@memberkit/types';
import type { ObjectSource } from './multipart.js';
import { readText, segment, Transport, type ClientOptions, type RawResponse, type RequestSpec } from './transport.js';

export interface ObjectStream {
  /** The bytes; consume or destroy it. */
  stream: Readable & AsyncIterable<Uint8Array>;
  headers: Record<string, string>;
  /** Content-Length, when the node sent one. */
  size?: number;
}

/** The describe headers (HEAD /object/{id}). */
export interface Description {
  formatId: string;
  size: number;
  checksum: Checksum;
  serialVersion: number;
  lastModified?: Date;
  contentType?: string;
}

export interface DateWindow {
  fromDate?: Date;
  toDate?: Date;
  start?: number;
  count?: number;
}

/** Operations shared by every node's base class: requests, typed decoding, closing. */
export class NodeClientBase {
  protected readonly http: Transport;
  constructor(options: ClientOptions) {
    this.http = new Transport(options);
  }
  get version() {
    return this.http.version;
  }
  protected async xml(spec: RequestSpec, signal?: AbortSignal): Promise<string> {
    const res = await this.http.send(spec, signal);
    return readText(res.body);
  }
  protected async ok(spec: RequestSpec, signal?: AbortSignal): Promise<true> {
    const res = await this.http.send(spec, signal);
    res.body.resume();
    return true;
  }
  protected async identifier(spec: RequestSpec, signal?: AbortSignal): Promise<string> {
    const text = await this.xml(spec, signal);
    return text.trimStart().startsWith('<') ? IdentifierCodec.decode(text) : text.trim();
  }
  protected stream(res: RawResponse): ObjectStream {
    const len = res.headers['content-length'];
    return { stream: res.body, headers: res.headers, ...(len !== undefined ? { size: Number(len) } : {}) };
  }
  /** Release the connection pool. */
  close(): Promise<void> {
    return this.http.close();
  }
}

/** A typed client for every Member Node operation (MNCore, MNRead, MNAuthorization, MNStorage, MNReplication, MNQuery, MNView, MNPackage). */
export class MemberNodeClient extends NodeClientBase {
  // MNCore
  async ping(signal?: AbortSignal): Promise<true> {
    return this.ok({ method: 'GET', path: '/monitor/ping' }, signal);
  }
  async getCapabilities(signal?: AbortSignal): Promise<Node> {
    return NodeCodec.decode(await this.xml({ method: 'GET', path: '/node' }, signal));
  }
  async getLogRecords(q: DateWindow & { event?: string; idFilter?: string } = {}, signal?: AbortSignal): Promise<Log> {
    const filter = this.version === 'v1' ? { pidFilter: q.idFilter } : { idFilter: q.idFilter };
    return LogCodec.decode(await this.xml({ method: 'GET', path: '/log', query: { fromDate: q.fromDate, toDate: q.toDate, event: q.event, ...filter, start: q.start, count: q.count } }, signal));
  }

  // MNRead
  async describe(id: string, signal?: AbortSignal): Promise<Description> {
    const res = await this.http.send({ method: 'HEAD', path: `/object/${segment(id)}` }, signal);
    res.body.resume();
    const h = res.headers;
    const [algorithm = '', value = ''] = (h['dataone-checksum'] ?? '').split(',');
    const lastModified = h['last-modified'] ? new Date(h['last-modified']) : undefined;
    return {
      formatId: h['dataone-formatid'] ?? h['dataone-objectformat'] ?? '',
      size: Number(h['content-length'] ?? 0),
      checksum: { algorithm, value },
      serialVersion: Number(h['dataone-serialversion'] ?? 0),
      ...(lastModified ? { lastModified } : {}),
      ...(h['content-type'] ? { contentType: h['content-type'] } : {}),
    };
  }
  /** get: the bytes as a stream (optionally a byte range, inclusive). */
  async get(id: string, options: { range?: { start: number; end?: number }; signal?: AbortSignal } = {}): Promise<ObjectStream> {
    const headers = options.range ? { range: `bytes=${options.range.start}-${options.range.end ?? ''}` } : undefined;
    return this.stream(await this.http.send({ method: 'GET', path: `/object/${segment(id)}`, ...(headers ? { headers } : {}) }, options.signal));
  }
  async getChecksum(pid: string, checksumAlgorithm?: string, signal?: AbortSignal): Promise<Checksum> {
    return ChecksumCodec.decode(await this.xml({ method: 'GET', path: `/checksum/${segment(pid)}`, query: { checksumAlgorithm } }, signal));
  }
  async getReplica(pid: string, signal?: AbortSignal): Promise<ObjectStream> {
    return this.stream(await this.http.send({ method: 'GET', path: `/replica/${segment(pid)}` }, signal));
  }
  async getSystemMetadata(id: string, signal?: AbortSignal): Promise<SystemMetadata> {
    return SystemMetadataCodec.decode(await this.xml({ method: 'GET', path: `/meta/${segment(id)}` }, signal));
  }
  async listObjects(q: DateWindow & { identifier?: string; formatId?: string; replicaStatus?: boolean } = {}, signal?: AbortSignal): Promise<ObjectList> {
    return ObjectListCodec.decode(await this.xml({ method: 'GET', path: '/object', query: { fromDate: q.fromDate, toDate: q.toDate, identifier: q.identifier, formatId: q.formatId, replicaStatus: q.replicaStatus, start: q.start, count: q.count } }, signal));
  }
  async synchronizationFailed(exception: DataONEException, signal?: AbortSignal): Promise<true> {
    return this.ok({ method: 'POST', path: '/error', parts: [{ name: 'message', value: exception.toXml(), fileName: 'error.xml' }] }, signal);
  }
  async systemMetadataChanged(pid: string, serialVersion: number, dateSysMetaLastModified: Date, signal?: AbortSignal): Promise<true> {
    return this.ok({
      method: 'POST',
      path: '/dirtySystemMetadata',
      parts: [
        { name: 'pid', value: pid },
        { name: 'serialVersion', value: String(serialVersion) },
        { name: 'dateSysMetaLastModified', value: dateSysMetaLastModified.toISOString() },
      ],
    }, signal);
  }

  // MNAuthorization
  /** isAuthorized: true when allowed; a denial is thrown as NotAuthorized. */
  async isAuthorized(id: string, action: Permission, signal?: AbortSignal): Promise<true> {
    return this.ok({ method: 'GET', path: `/isAuthorized/${segment(id)}`, query: { action } }, signal);
  }

  // MNStorage
  async create(pid: string, object: ObjectSource, sysmeta: SystemMetadata, signal?: AbortSignal): Promise<string> {
    return this.identifier({
      method: 'POST',
      path: '/object',
      parts: [
        { name: 'pid', value: pid },
        { name: 'object', source: object, fileName: 'object' },
        { name: 'sysmeta', value: SystemMetadataCodec.encode(sysmeta, this.version), fileName: 'sysmeta.xml' },
      ],
    }, signal);
  }
  async update(pid: string, object: ObjectSource, newPid: string, sysmeta: SystemMetadata, signal?: AbortSignal): Promise<string> {
    return this.identifier({
      method: 'PUT',
      path: `/object/${segment(pid)}`,
      parts: [
        { name: 'newPid', value: newPid },
        { name: 'object', source: object, fileName: 'object' },
        { name: 'sysmeta', value: SystemMetadataCodec.encode(sysmeta, this.version), fileName: 'sysmeta.xml' },
      ],
    }, signal);
  }
  async delete(id: string, signal?: AbortSignal): Promise<string> {
    return this.identifier({ method: 'DELETE', path: `/object/${segment(id)}` }, signal);
  }
  async archive(id: string, signal?: AbortSignal): Promise<string> {
    return this.identifier({ method: 'PUT', path: `/archive/${segment(id)}` }, signal);
  }
  async generateIdentifier(scheme = 'UUID', fragment?: string, signal?: AbortSignal): Promise<string> {
    return this.identifier({ method: 'POST', path: '/generate', parts: [{ name: 'scheme', value: scheme }, ...(fragment ? [{ name: 'fragment', value: fragment }] : [])] }, signal);
  }
  async updateSystemMetadata(pid: string, sysmeta: SystemMetadata, signal?: AbortSignal): Promise<true> {
    return this.ok({ method: 'PUT', path: '/meta', parts: [{ name: 'pid', value: pid }, { name: 'sysmeta', value: SystemMetadataCodec.encode(sysmeta, 'v2'), fileName: 'sysmeta.xml' }] }, signal);
  }

  // MNReplication
  async replicate(sysmeta: SystemMetadata, sourceNode: string, signal?: AbortSignal): Promise<true> {
    return this.ok({ method: 'POST', path: '/replicate', parts: [{ name: 'sysmeta', value: SystemMetadataCodec.encode(sysmeta, this.version), fileName: 'sysmeta.xml' }, { name: 'sourceNode', value: sourceNode }] }, signal);
  }

  // MNQuery
  async listQueryEngines(signal?: AbortSignal): Promise<QueryEngineList> {
    return QueryEngineListCodec.decode(await this.xml({ method: 'GET', path: '/query' }, signal));
  }
  async getQueryEngineDescription(engine: string, signal?: AbortSignal): Promise<QueryEngineDescription> {
    return QueryEngineDescriptionCodec.decode(await this.xml({ method: 'GET', path: `/query/${segment(engine)}` }, signal));
  }
  /** query: `query` is the engine's own syntax, passed verbatim (e.g. `select?q=*:*&wt=json`). */
  async query(engine: string, query: string, signal?: AbortSignal): Promise<ObjectStream> {
    return this.stream(await this.http.send({ method: 'GET', path: `/query/${segment(engine)}/${query}` }, signal));
  }

  // MNView and MNPackage
  async listViews(signal?: AbortSignal): Promise<OptionList> {
    return OptionListCodec.decode(await this.xml({ method: 'GET', path: '/views' }, signal));
  }
  async view(theme: string, id: string, signal?: AbortSignal): Promise<ObjectStream> {
    return this.stream(await this.http.send({ method: 'GET', path: `/views/${segment(theme)}/${segment(id)}` }, signal));
  }
  async getPackage(packageType: string, id: string, signal?: AbortSignal): Promise<ObjectStream> {
    return this.stream(await this.http.send({ method: 'GET', path: `/packages/${segment(packageType)}/${segment(id)}` }, signal));
  }
}
