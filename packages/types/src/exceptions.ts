import { XMLBuilder } from 'fast-xml-parser';
import { DecodeError } from './decode-error.js';
import { DETAIL_CODES } from './generated/detail-codes.data.js';
import { parseXml, type XmlNode } from './xml/safe-parse.js';

/** Every DataONE exception with its HTTP status (errorCode). */
export const EXCEPTION_ERROR_CODES = {
  AuthenticationTimeout: 408,
  IdentifierNotUnique: 409,
  InsufficientResources: 413,
  InvalidCredentials: 401,
  InvalidRequest: 400,
  InvalidSystemMetadata: 400,
  InvalidToken: 401,
  NotAuthorized: 401,
  NotFound: 404,
  NotImplemented: 501,
  ServiceFailure: 500,
  SynchronizationFailed: 0,
  UnsupportedMetadataType: 400,
  UnsupportedQueryType: 400,
  UnsupportedType: 400,
  VersionMismatch: 409,
} as const;

export type ExceptionName = keyof typeof EXCEPTION_ERROR_CODES;

export interface ExceptionFields {
  description?: string;
  /** detailCode; defaults to the operation's documented code, or '0' when none is documented. */
  detailCode?: string;
  /** The identifier the error is about (error attribute `identifier`, header `DataONE-Exception-PID`). */
  pid?: string;
  nodeId?: string;
  traceInformation?: string;
  /** errorCode override, only for peers that send a non-standard one. */
  errorCode?: number;
  cause?: unknown;
}

const BRAND = Symbol.for('memberkit.DataONEException');

/**
 * Base of every DataONE exception. `errorCode` is the HTTP status, `detailCode` the
 * operation-specific code from the API reference (see detailCodeFor).
 */
export class DataONEException extends Error {
  readonly [BRAND] = true;
  readonly exceptionName: ExceptionName;
  readonly errorCode: number;
  readonly detailCode: string;
  readonly description: string;
  readonly pid?: string;
  readonly nodeId?: string;
  readonly traceInformation?: string;

  constructor(exceptionName: ExceptionName, fields: ExceptionFields = {}) {
    super(fields.description ?? exceptionName, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.name = exceptionName;
    this.exceptionName = exceptionName;
    this.errorCode = fields.errorCode ?? EXCEPTION_ERROR_CODES[exceptionName];
    this.detailCode = fields.detailCode ?? '0';
    this.description = fields.description ?? '';
    if (fields.pid !== undefined) this.pid = fields.pid;
    if (fields.nodeId !== undefined) this.nodeId = fields.nodeId;
    if (fields.traceInformation !== undefined) this.traceInformation = fields.traceInformation;
  }

  static is(e: unknown): e is DataONEException {
    return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[BRAND] === true;
  }

  /** A copy with another detailCode (used when the operation is known only at the edge). */
  withDetailCode(detailCode: string): DataONEException {
    return createException(this.exceptionName, { ...this.fields(), detailCode });
  }

  fields(): ExceptionFields {
    return {
      description: this.description,
      detailCode: this.detailCode,
      errorCode: this.errorCode,
      ...(this.pid !== undefined ? { pid: this.pid } : {}),
      ...(this.nodeId !== undefined ? { nodeId: this.nodeId } : {}),
      ...(this.traceInformation !== undefined ? { traceInformation: this.traceInformation } : {}),
    };
  }

  /** The error body: root `<error>` in no namespace, `description` then `traceInformation`. */
  toXml(): string {
    return exceptionToXml(this);
  }

  /** The HEAD form (INTEROP.md: both the spec's and the Python library's pid header). */
  toHeaders(): Record<string, string> {
    return exceptionToHeaders(this);
  }
}

type Ctor = new (fields?: ExceptionFields) => DataONEException;
function subclass(name: ExceptionName): Ctor {
  const C = class extends DataONEException {
    constructor(fields: ExceptionFields = {}) {
      super(name, fields);
    }
  };
  Object.defineProperty(C, 'name', { value: name });
  return C;
}

export const AuthenticationTimeout = subclass('AuthenticationTimeout');
export const IdentifierNotUnique = subclass('IdentifierNotUnique');
export const InsufficientResources = subclass('InsufficientResources');
export const InvalidCredentials = subclass('InvalidCredentials');
export const InvalidRequest = subclass('InvalidRequest');
export const InvalidSystemMetadata = subclass('InvalidSystemMetadata');
export const InvalidToken = subclass('InvalidToken');
export const NotAuthorized = subclass('NotAuthorized');
export const NotFound = subclass('NotFound');
export const NotImplemented = subclass('NotImplemented');
export const ServiceFailure = subclass('ServiceFailure');
export const SynchronizationFailed = subclass('SynchronizationFailed');
export const UnsupportedMetadataType = subclass('UnsupportedMetadataType');
export const UnsupportedQueryType = subclass('UnsupportedQueryType');
export const UnsupportedType = subclass('UnsupportedType');
export const VersionMismatch = subclass('VersionMismatch');

const CLASSES: Record<ExceptionName, Ctor> = {
  AuthenticationTimeout, IdentifierNotUnique, InsufficientResources, InvalidCredentials, InvalidRequest,
  InvalidSystemMetadata, InvalidToken, NotAuthorized, NotFound, NotImplemented, ServiceFailure,
  SynchronizationFailed, UnsupportedMetadataType, UnsupportedQueryType, UnsupportedType, VersionMismatch,
};

export function isExceptionName(name: string): name is ExceptionName {
  return Object.hasOwn(EXCEPTION_ERROR_CODES, name);
}

/** An instance of the right subclass for `name`. */
export function createException(name: ExceptionName, fields: ExceptionFields = {}): DataONEException {
  return new CLASSES[name](fields);
}

/**
 * The documented detailCode of `exception` raised by `operation` ("MNRead.get"), from
 * spec/detail-codes.tsv; undefined when the API reference documents none.
 */
export function detailCodeFor(operation: string, exception: ExceptionName): string | undefined {
  return DETAIL_CODES[operation]?.[exception];
}

/** Exceptions the API reference documents for an operation ("MNStorage.create"). */
export function documentedExceptions(operation: string): ExceptionName[] {
  return Object.keys(DETAIL_CODES[operation] ?? {}).filter(isExceptionName);
}

const builder = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_', format: false, processEntities: true, suppressEmptyNode: false, suppressBooleanAttributes: false });

// Code points XML 1.0 cannot carry; an error body must stay well-formed whatever a message
// or stack trace holds (terminal colour codes, NULs), so they become U+FFFD.
// eslint-disable-next-line no-control-regex
const NOT_XML_CHAR = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const xmlSafe = (s: string): string => s.replace(NOT_XML_CHAR, '\uFFFD');

export function exceptionToXml(e: DataONEException): string {
  const error: Record<string, unknown> = {
    '@_name': e.exceptionName,
    '@_errorCode': String(e.errorCode),
    '@_detailCode': xmlSafe(e.detailCode),
  };
  if (e.pid !== undefined) error['@_identifier'] = xmlSafe(e.pid);
  if (e.nodeId !== undefined) error['@_nodeId'] = xmlSafe(e.nodeId);
  error.description = xmlSafe(e.description);
  if (e.traceInformation !== undefined) error.traceInformation = xmlSafe(e.traceInformation);
  return '<?xml version="1.0" encoding="UTF-8"?>' + builder.build({ error });
}

// Header values must be printable ASCII without line breaks (and lose surrounding spaces).
// A value that is already such text is sent as is, so peers (the Python library) read the
// pid and description unchanged, `%2F` and `100%` included. Any other value is sent in
// RFC 8187 form, `UTF-8''` then the percent-encoded UTF-8, which exceptionFromHeaders
// decodes back exactly (unicode, newlines, surrounding spaces).
const ENCODED_PREFIX = "UTF-8''";

function headerValue(s: string): string {
  const plain = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(s) && !s.startsWith(ENCODED_PREFIX);
  if (plain || s === '') return s;
  return ENCODED_PREFIX + encodeURIComponent(s);
}

export function exceptionToHeaders(e: DataONEException): Record<string, string> {
  const h: Record<string, string> = {
    'DataONE-Exception-Name': e.exceptionName,
    'DataONE-Exception-DetailCode': e.detailCode,
    'DataONE-Exception-Description': headerValue(e.description),
  };
  if (e.traceInformation !== undefined) h['DataONE-Exception-TraceInformation'] = headerValue(e.traceInformation);
  if (e.nodeId !== undefined) h['DataONE-Exception-NodeId'] = headerValue(e.nodeId);
  if (e.pid !== undefined) {
    h['DataONE-Exception-PID'] = headerValue(e.pid);
    h['DataONE-Exception-Identifier'] = headerValue(e.pid);
  }
  return h;
}

function text(node: XmlNode | undefined): string | undefined {
  if (node === undefined) return undefined;
  if (typeof node === 'string') return node;
  const t = node['#text'];
  return typeof t === 'string' ? t : '';
}

/** Parse an error body back into the typed exception. @throws DecodeError if it is not one. */
export function exceptionFromXml(xml: string | Uint8Array): DataONEException {
  const doc = parseXml(xml, { maxBytes: 1 << 20 });
  if (doc.rootName !== 'error') throw new DecodeError(`expected root element <error>, found <${doc.rootName}>`);
  const r = doc.root;
  const name = String(r['@_name'] ?? '');
  const errorCode = Number(r['@_errorCode']);
  const detailCode = r['@_detailCode'] === undefined ? '0' : String(r['@_detailCode']);
  const desc = text((r.description as XmlNode[] | undefined)?.[0]);
  const trace = (r.traceInformation as XmlNode[] | undefined)?.[0];
  const fields: ExceptionFields = {
    detailCode,
    ...(desc !== undefined ? { description: desc } : {}),
    ...(trace !== undefined ? { traceInformation: text(trace) ?? '' } : {}),
    ...(r['@_identifier'] !== undefined ? { pid: String(r['@_identifier']) } : {}),
    ...(r['@_pid'] !== undefined ? { pid: String(r['@_pid']) } : {}),
    ...(r['@_nodeId'] !== undefined ? { nodeId: String(r['@_nodeId']) } : {}),
  };
  if (!isExceptionName(name)) {
    return new ServiceFailure({ ...fields, description: `unknown exception '${name}': ${desc ?? ''}`, ...(Number.isFinite(errorCode) ? { errorCode } : {}) });
  }
  if (Number.isFinite(errorCode) && errorCode !== EXCEPTION_ERROR_CODES[name]) fields.errorCode = errorCode;
  return createException(name, fields);
}

function unescapeHeader(s: string | undefined): string | undefined {
  if (s === undefined || !s.startsWith(ENCODED_PREFIX)) return s;
  try {
    return decodeURIComponent(s.slice(ENCODED_PREFIX.length));
  } catch {
    return s;
  }
}

/** Read an exception from HEAD response headers (case-insensitive names); undefined if absent. */
export function exceptionFromHeaders(headers: Headers | Record<string, string | undefined>, status?: number): DataONEException | undefined {
  const get = (k: string): string | undefined =>
    headers instanceof Headers
      ? (headers.get(k) ?? undefined)
      : (Object.entries(headers).find(([name]) => name.toLowerCase() === k.toLowerCase())?.[1] ?? undefined);
  const name = get('DataONE-Exception-Name');
  if (!name) return undefined;
  const pid = unescapeHeader(get('DataONE-Exception-PID') ?? get('DataONE-Exception-Identifier'));
  const nodeId = unescapeHeader(get('DataONE-Exception-NodeId'));
  const trace = unescapeHeader(get('DataONE-Exception-TraceInformation'));
  const fields: ExceptionFields = {
    detailCode: get('DataONE-Exception-DetailCode') ?? '0',
    description: unescapeHeader(get('DataONE-Exception-Description')) ?? '',
    ...(pid !== undefined ? { pid } : {}),
    ...(nodeId !== undefined ? { nodeId } : {}),
    ...(trace !== undefined ? { traceInformation: trace } : {}),
  };
  if (!isExceptionName(name)) return new ServiceFailure({ ...fields, description: `unknown exception '${name}': ${fields.description}` });
  if (status !== undefined && status !== EXCEPTION_ERROR_CODES[name]) fields.errorCode = status;
  return createException(name, fields);
}
