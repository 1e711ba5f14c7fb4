// A Member Node in this process, answering through Hono's app.request (no socket): the
// native SQL catalogue on SQLite and managed filesystem storage, both in a temporary folder.
// Requests and answers use the testkit's documents and assertions, so these fast tests and
// the HTTP suite check the same things the same way.
import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFilesystemStorage } from '@memberkit/adapter-filesystem';
import { createSqlCatalogue } from '@memberkit/adapter-sql';
import { createMemberNode, DEFAULT_SCHEDULE, generateTokenKeyPair, mintToken, silentLogger, type CoreConfig, type MemberNode } from '@memberkit/core';
import {
  buildUploadSysmeta, createParts, encodeSysmeta, expectDocument, expectError, multipartBody, updateParts,
  TYPES_V1, TYPES_V2, type Caller, type MultipartPart, type NodeResponse, type SysmetaOptions,
} from '@memberkit/testkit';
import { parseXml, SystemMetadataCodec, type ApiVersion, type SystemMetadata } from '@memberkit/types';

export const SUBJECTS = {
  writer: 'CN=Writer,O=Memberkit App Test,DC=org',
  admin: 'CN=Admin,O=Memberkit App Test,DC=org',
  other: 'CN=Other,O=Memberkit App Test,DC=org',
} as const;

const NODE_ID = 'urn:node:MEMBERKITAPP';
const BASE = '/mn';

export interface InProcessNode {
  node: MemberNode;
  /** The temporary folder of the catalogue (catalogue.sqlite) and the managed storage (objects/). */
  dir: string;
  /** One request through app.request, answered as the testkit's NodeResponse. */
  call(method: string, path: string, options?: { as?: Caller; multipart?: readonly MultipartPart[]; headers?: Record<string, string> }): Promise<NodeResponse>;
  /** MNStorage.create of `pid` by the writer (options: sysmeta fields, overrides, caller). */
  create(v: ApiVersion, pid: string, o?: UploadOptions): Promise<NodeResponse>;
  /** MNStorage.update of `oldPid` by `newPid`; sysmeta.obsoletes is `oldPid` unless overridden. */
  update(v: ApiVersion, oldPid: string, newPid: string, o?: UploadOptions): Promise<NodeResponse>;
  /** getSystemMetadata of `id` as the administrator, decoded. */
  meta(v: ApiVersion, id: string): Promise<SystemMetadata>;
  /** MNStorage.updateSystemMetadata (v2) of `pid` with `sm`. */
  updateSystemMetadata(pid: string, sm: SystemMetadata, as?: Caller): Promise<NodeResponse>;
  close(): Promise<void>;
}

export interface UploadOptions extends Partial<Omit<SysmetaOptions, 'pid' | 'bytes' | 'rightsHolder'>> {
  as?: Caller;
  bytes?: string | Uint8Array;
}

export interface InProcessNodeOptions {
  /** How the catalogue flushes its write-ahead log (a test's stand-in for fdatasync, to make it fail). */
  walFlush?: (handle: FileHandle) => Promise<void>;
}

export async function startInProcessNode(options: InProcessNodeOptions = {}): Promise<InProcessNode> {
  const dir = await mkdtemp(join(tmpdir(), 'memberkit-app-'));
  const keys = generateTokenKeyPair();
  const tokens = {
    writer: await mintToken(keys.privateKeyPem, { subject: SUBJECTS.writer }),
    admin: await mintToken(keys.privateKeyPem, { subject: SUBJECTS.admin }),
    other: await mintToken(keys.privateKeyPem, { subject: SUBJECTS.other }),
  };
  const file = join(dir, 'catalogue.sqlite');
  const sql = createSqlCatalogue({ dialect: 'sqlite', connection: options.walFlush ? { file, walFlush: options.walFlush } : file });
  const config: CoreConfig = {
    node: {
      identifier: NODE_ID, name: 'in-process test node', description: 'A Member Node answering app.request in the core tests',
      baseURL: `http://127.0.0.1${BASE}`, subject: `CN=${NODE_ID},DC=dataone,DC=org`, contactSubject: [SUBJECTS.admin],
      replicate: false, synchronize: true, schedule: DEFAULT_SCHEDULE,
    },
    access: { administrators: [SUBJECTS.admin], cnSubjects: [], createPolicy: 'authenticated' },
    auth: { jwt: { keys: [keys.publicKeyPem] } },
    basePath: BASE,
  };
  const node = await createMemberNode(
    config,
    { storage: createFilesystemStorage({ root: join(dir, 'objects') }), metadata: sql.catalogue, eventLog: sql.eventLog },
    { logger: silentLogger },
  );

  const call: InProcessNode['call'] = async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    const as = options.as ?? 'public';
    if (typeof as === 'object') headers.Authorization = as.authorization;
    else if (as !== 'public') headers.Authorization = `Bearer ${tokens[as]}`;
    let body: Blob | undefined;
    if (options.multipart) {
      const mp = multipartBody(options.multipart);
      body = mp.body;
      headers['Content-Type'] = mp.contentType;
    }
    const res = await node.app.request(`${BASE}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
    const bytes = new Uint8Array(await res.arrayBuffer());
    const text = new TextDecoder().decode(bytes);
    const out: NodeResponse = { method, url: path, status: res.status, headers: res.headers, bytes, text, label: `${method} ${path} -> ${res.status}` };
    if (text.trimStart().startsWith('<')) {
      try {
        out.doc = parseXml(text);
      } catch {
        // not XML after all (object bytes): left as text
      }
    }
    return out;
  };

  const upload = (pid: string, o: UploadOptions): { bytes: string | Uint8Array; sm: SystemMetadata } => {
    const { as: _as, bytes: given, ...fields } = o;
    const bytes = given ?? `id,value\n${pid},${Math.random()}\n`;
    return { bytes, sm: buildUploadSysmeta({ pid, bytes, rightsHolder: SUBJECTS.writer, ...fields }) };
  };

  return {
    node,
    dir,
    call,
    async create(v, pid, o = {}) {
      const { bytes, sm } = upload(pid, o);
      return call('POST', `/${v}/object`, { as: o.as ?? 'writer', multipart: createParts(pid, bytes, encodeSysmeta(sm, v)) });
    },
    async update(v, oldPid, newPid, o = {}) {
      const { bytes, sm } = upload(newPid, { obsoletes: oldPid, ...o });
      return call('PUT', `/${v}/object/${encodeURIComponent(oldPid)}`, { as: o.as ?? 'writer', multipart: updateParts(newPid, bytes, encodeSysmeta(sm, v)) });
    },
    async meta(v, id) {
      const res = await call('GET', `/${v}/meta/${encodeURIComponent(id)}`, { as: 'admin' });
      expectDocument(res, 'systemMetadata', v === 'v1' ? TYPES_V1 : TYPES_V2);
      return SystemMetadataCodec.decode(res.text);
    },
    updateSystemMetadata(pid, sm, as = 'writer') {
      return call('PUT', '/v2/meta', { as, multipart: [{ name: 'pid', value: pid }, { name: 'sysmeta', value: encodeSysmeta(sm, 'v2'), fileName: 'sysmeta.xml' }] });
    },
    async close() {
      await node.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

interface DetailCodeRow { api: string; operation: string; exception: string; errorCode: number; detailCode: string }

/** The API reference's exception table, vendored at spec/detail-codes.tsv. */
const DETAIL_CODES: DetailCodeRow[] = readFileSync(join(import.meta.dirname, '../../../../spec/detail-codes.tsv'), 'utf8')
  .split('\n').slice(1).filter((line) => line.trim() !== '')
  .map((line) => {
    const [api, operation, , , exception, errorCode, detailCode] = line.split('\t');
    return { api: api!, operation: operation!, exception: exception!, errorCode: Number(errorCode), detailCode: detailCode!.trim() };
  });

/** `MNStorage.update` + `InvalidSystemMetadata` -> its errorCode and detailCode in the spec table. */
export function specError(method: string, exception: string): { errorCode: number; detailCode: string } {
  const [api, operation] = method.split('.');
  const rows = DETAIL_CODES.filter((r) => r.api === api && r.operation === operation && r.exception === exception);
  const codes = new Set(rows.map((r) => r.detailCode));
  if (codes.size !== 1) throw new Error(`spec/detail-codes.tsv: ${codes.size} detail codes for ${method} ${exception}`);
  return { errorCode: rows[0]!.errorCode, detailCode: rows[0]!.detailCode };
}

/** The answer is `exception` with the errorCode and detailCode the spec gives it for `method`. */
export function expectSpecError(res: NodeResponse, method: string, exception: string, pid?: string): void {
  const { errorCode, detailCode } = specError(method, exception);
  expectError(res, exception, errorCode, detailCode, pid);
}
