import { Readable } from 'node:stream';
import type { ServerResponse } from 'node:http';
import type { Context, Hono } from 'hono';
import {
  ChecksumCodec,
  LogCodec,
  NodeCodec,
  ObjectListCodec,
  SystemMetadataCodec,
  encodeLogParts,
  type ApiVersion,
  type ByteRange,
  type ObjectRecord,
  type StorageReadResult,
} from '@memberkit/types';
import { fail, type Operation } from '../errors.js';
import { headerReader } from './request-headers.js';
import type { CallContext } from '../session.js';
import type { NodeServices } from './services.js';
import type { OperationRoute } from '../extension.js';
import { parseMultipart, partText } from './multipart.js';
import { QueryParams } from './params.js';
import { alreadySent, identifierResponse, nodeResponse, NOSNIFF, trueResponse, xmlDocument, xmlDocumentResponse, xmlPartsResponse, xmlResponse } from './responses.js';
import { contentDisposition, fileNameOf, objectHeaders } from '../services/header-values.js';
import { derivedOnce } from '../services/record-cache.js';


/** The path parameter, decoded once (identifiers arrive percent-encoded, `/` as %2F). */
function id(c: Context): string {
  return c.req.param('id') ?? '';
}

/** `Range: bytes=a-b` (single range), or undefined. Invalid ranges are ignored (full body). */
function parseRange(header: string | undefined, size: number): ByteRange | undefined | 'unsatisfiable' {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}

/**
 * Pipe `stream` into `outgoing`. Errors (a storage read failing mid-body, the client going
 * away) end the connection, as a failed web stream did, and the file is closed either way.
 * Not stream.pipeline: it aborts an AbortController of its own when done, and the
 * DOMException that builds (with a stack) cost a tenth of a small download's time.
 */
function sendStream(stream: Readable, outgoing: ServerResponse): void {
  stream.once('error', () => outgoing.destroy());
  outgoing.once('close', () => stream.destroy());
  stream.pipe(outgoing);
}

/**
 * Send the bytes of `record`: every header is built from the record before the bytes are
 * opened (`open`), so a value that cannot be sent fails before any stream exists, and a
 * stream once opened is always either piped or destroyed.
 */
async function download(c: Context, record: ObjectRecord, version: ApiVersion, open: () => Promise<StorageReadResult>, range?: ByteRange): Promise<Response> {
  const status = range ? 206 : 200;
  const sm = record.sysmeta;
  const headers: Record<string, string> = {
    ...derivedOnce(sm, `download headers ${version}`, () => ({
      ...objectHeaders(sm, version),
      'Content-Disposition': contentDisposition(fileNameOf(sm)),
      'Accept-Ranges': 'bytes',
      // written by writeHead below, with the header the app adds to every answer
      'X-Content-Type-Options': NOSNIFF,
    })),
  };
  const content = await open();
  try {
    headers['Content-Length'] = String(content.length);
    if (range) headers['Content-Range'] = `bytes ${range.start}-${range.start + content.length - 1}/${content.size}`;
    // Served by @hono/node-server: pipe the Node stream straight into its ServerResponse and
    // tell node-server the answer is sent. The web-stream path (Readable.toWeb + a reader loop)
    // costs a promise and a copy per chunk and ran at a fraction of a bare pipe's speed.
    const outgoing = nodeResponse(c);
    if (outgoing && c.req.method === 'GET') {
      outgoing.writeHead(status, headers);
      sendStream(content.stream, outgoing);
      return alreadySent();
    }
    const signal = c.req.raw.signal;
    signal?.addEventListener('abort', () => content.stream.destroy(), { once: true });
    return new Response(Readable.toWeb(content.stream) as ReadableStream, { status, headers });
  } catch (err) {
    content.stream.destroy();
    throw err;
  }
}

/** Register every Member Node operation of one API version on `app`. */
export function registerRoutes(app: Hono, version: ApiVersion, services: NodeServices, operation: OperationRoute): void {
  const { objects, storing, events, capabilities } = services;

  const capabilitiesHandler = operation('MNCore.getCapabilities', async () => xmlResponse(NodeCodec.encode(capabilities.node(), version)));
  app.get('/', capabilitiesHandler);
  app.get('/node', capabilitiesHandler);

  app.get(
    '/monitor/ping',
    operation('MNCore.ping', async () => {
      await services.ping();
      const now = new Date();
      return new Response(null, { status: 200, headers: { Date: now.toUTCString(), Expires: now.toUTCString(), 'Cache-Control': 'no-cache, no-store, must-revalidate' } });
    }),
  );

  app.get(
    '/log',
    operation('MNCore.getLogRecords', async (c, ctx, q) => {
      const event = q.string('event');
      if (version === 'v1' && event !== undefined && !['create', 'read', 'update', 'delete', 'replicate', 'synchronization_failed', 'replication_failed'].includes(event)) {
        throw fail('MNCore.getLogRecords', 'InvalidRequest', `event '${event}' is not a v1 Event (create, read, update, delete, replicate, synchronization_failed, replication_failed)`);
      }
      const idFilter = version === 'v1' ? (q.string('pidFilter') ?? q.string('idFilter')) : (q.string('idFilter') ?? q.string('pidFilter'));
      const fromDate = q.date('fromDate');
      const toDate = q.date('toDate');
      const log = await events.getLogRecords(ctx, {
        ...(fromDate ? { fromDate } : {}),
        ...(toDate ? { toDate } : {}),
        ...(event ? { event } : {}),
        ...(idFilter ? { idFilter } : {}),
        start: q.nonNegativeInt('start', 0),
        count: q.nonNegativeInt('count', 1000),
      });
      return xmlPartsResponse(c, encodeLogParts(log, version));
    }),
  );

  // describe is HEAD /object/{id}; Hono dispatches HEAD to the GET route, so both live here.
  const getObject = operation('MNRead.get', async (c, ctx) => {
    if (c.req.method === 'HEAD') {
      const record = await objects.describe(ctx, id(c));
      const sm = record.sysmeta;
      const headers = derivedOnce(sm, `describe headers ${version}`, () => ({ ...objectHeaders(sm, version), 'Content-Length': String(sm.size), 'X-Content-Type-Options': NOSNIFF }));
      // Hono answers HEAD with a new Response around the route's, which @hono/node-server can
      // only write through fetch Headers (about 6 % of a describe's CPU in a profile): the head
      // goes to node's response here, with the header the app adds to every answer.
      const outgoing = nodeResponse(c);
      if (outgoing) {
        outgoing.writeHead(200, headers);
        outgoing.end();
        return alreadySent();
      }
      // A copy: the cached object is shared by every later describe of this record.
      return new Response(null, { status: 200, headers: { ...headers } });
    }
    const record = await objects.authorizeGet(ctx, id(c));
    let range: ByteRange | undefined;
    // Node's parsed headers: c.req.header() would build a fetch Headers for every download.
    const rangeHeader = headerReader(c).get('range');
    if (rangeHeader) {
      const parsed = parseRange(rangeHeader, record.sysmeta.size);
      if (parsed === 'unsatisfiable') return new Response(null, { status: 416, headers: { 'Content-Range': `bytes */${record.sysmeta.size}` } });
      range = parsed;
    }
    return download(c, record, version, () => objects.read(ctx, record, range), range);
  });
  app.get('/object/:id{.+}', getObject);

  app.get(
    '/object',
    operation('MNRead.listObjects', async (c, ctx, q) => {
      const fromDate = q.date('fromDate');
      const toDate = q.date('toDate');
      const formatId = q.string('formatId');
      const identifier = q.string('identifier');
      const replicaStatus = q.boolean('replicaStatus');
      const list = await objects.listObjects(ctx, {
        ...(fromDate ? { fromDate } : {}),
        ...(toDate ? { toDate } : {}),
        ...(formatId ? { formatId } : {}),
        ...(identifier ? { identifier } : {}),
        ...(replicaStatus !== undefined ? { replicaStatus } : {}),
        start: q.nonNegativeInt('start', 0),
        count: q.nonNegativeInt('count', 1000),
      });
      return xmlPartsResponse(c, ObjectListCodec.encodeParts(list, version));
    }),
  );

  app.get(
    '/checksum/:id{.+}',
    operation('MNRead.getChecksum', async (c, ctx, q) => xmlResponse(ChecksumCodec.encode(await objects.getChecksum(ctx, id(c), q.string('checksumAlgorithm')), version))),
  );

  app.get(
    '/meta/:id{.+}',
    operation('MNRead.getSystemMetadata', async (c, ctx) => {
      const { sysmeta } = await objects.getSystemMetadata(ctx, id(c));
      return xmlDocumentResponse(derivedOnce(sysmeta, `meta ${version}`, () => xmlDocument(SystemMetadataCodec.encode(sysmeta, version))));
    }),
  );

  app.get(
    '/replica/:id{.+}',
    operation('MNRead.getReplica', async (c, ctx) => {
      const record = await objects.authorizeReplica(ctx, id(c));
      return download(c, record, version, () => objects.readReplica(ctx, record));
    }),
  );

  app.get(
    '/isAuthorized/:id{.+}',
    operation('MNAuthorization.isAuthorized', async (c, ctx, q) => {
      await objects.isAuthorized(ctx, id(c), q.string('action'));
      return trueResponse();
    }),
  );

  // Every operation that takes a body first checks who is calling, as far as it can before
  // the body names the object: an unauthorized caller is refused without reading a byte.

  // replicate: Tier 4, served when the node takes part in a federation (a CN is configured).
  app.post(
    '/replicate',
    operation('MNReplication.replicate', async (c, ctx) => {
      const federation = services.federation.current;
      if (!federation) throw fail('MNReplication.replicate', 'NotImplemented', 'this node takes no part in replication (no Coordinating Node is configured)');
      federation.replication.assertMayReplicate(ctx);
      const parts = await parseMultipart('MNReplication.replicate', c);
      await federation.replication.accept(ctx, parts.fields.get('sysmeta'), partText(parts, 'sourceNode'));
      return trueResponse();
    }),
  );

  app.post(
    '/error',
    operation('MNRead.synchronizationFailed', async (c, ctx) => {
      storing.assertAllowed('MNRead.synchronizationFailed', ctx, 'only Coordinating Nodes may report synchronization failures');
      const parts = await parseMultipart('MNRead.synchronizationFailed', c);
      await storing.synchronizationFailed(ctx, parts.fields.get('message'));
      return trueResponse();
    }),
  );

  app.post(
    '/dirtySystemMetadata',
    operation('MNRead.systemMetadataChanged', async (c, ctx) => {
      storing.assertAllowed('MNRead.systemMetadataChanged', ctx, 'only Coordinating Nodes may call systemMetadataChanged');
      const parts = await parseMultipart('MNRead.systemMetadataChanged', c);
      await storing.systemMetadataChanged(ctx, {
        id: partText(parts, 'pid', 'id'),
        serialVersion: partText(parts, 'serialVersion'),
        dateSysMetaLastModified: partText(parts, 'dateSysMetaLastModified'),
      });
      return trueResponse();
    }),
  );

  app.post(
    '/object',
    operation('MNStorage.create', async (c, ctx) => {
      storing.assertMayCreate(ctx);
      const parts = await parseMultipart('MNStorage.create', c, {
        streamName: 'object',
        onStream: (stream) => storing.spool('MNStorage.create', stream, ctx.signal),
        onStreamAbandoned: (upload) => upload.pending.abort(),
      });
      if (!parts.streamed) throw fail('MNStorage.create', 'InvalidRequest', "the 'object' part is missing", { ...(partText(parts, 'pid') ? { pid: partText(parts, 'pid')! } : {}) });
      const pid = await storing.create(ctx, { pid: partText(parts, 'pid'), sysmeta: parts.fields.get('sysmeta'), upload: parts.streamed });
      return identifierResponse(c, pid, version);
    }),
  );

  app.put(
    '/object/:id{.+}',
    operation('MNStorage.update', async (c, ctx) => {
      const pid = id(c);
      await storing.assertMayUpdate(ctx, pid);
      const parts = await parseMultipart('MNStorage.update', c, {
        streamName: 'object',
        onStream: (stream) => storing.spool('MNStorage.update', stream, ctx.signal),
        onStreamAbandoned: (upload) => upload.pending.abort(),
      });
      if (!parts.streamed) throw fail('MNStorage.update', 'InvalidRequest', "the 'object' part is missing", { pid });
      const newPid = await storing.update(ctx, { pid, newPid: partText(parts, 'newPid'), sysmeta: parts.fields.get('sysmeta'), upload: parts.streamed });
      return identifierResponse(c, newPid, version);
    }),
  );

  app.delete(
    '/object/:id{.+}',
    operation('MNStorage.delete', async (c, ctx) => identifierResponse(c, await storing.delete(ctx, id(c)), version)),
  );

  app.put(
    '/archive/:id{.+}',
    operation('MNStorage.archive', async (c, ctx) => identifierResponse(c, await storing.archive(ctx, id(c)), version)),
  );

  app.post(
    '/generate',
    operation('MNStorage.generateIdentifier', async (c, ctx) => {
      storing.assertMayGenerateIdentifier(ctx);
      const parts = await parseMultipart('MNStorage.generateIdentifier', c);
      return identifierResponse(c, await storing.generateIdentifier(ctx, partText(parts, 'scheme')), version);
    }),
  );

  if (version === 'v2') {
    app.put(
      '/meta',
      operation('MNStorage.updateSystemMetadata', async (c, ctx) => {
        storing.assertMayUpdateSystemMetadata(ctx);
        const parts = await parseMultipart('MNStorage.updateSystemMetadata', c);
        await storing.updateSystemMetadata(ctx, { pid: partText(parts, 'pid'), sysmeta: parts.fields.get('sysmeta') });
        return trueResponse();
      }),
    );
  }
}
