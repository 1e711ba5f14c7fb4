import {
  ChecksumAlgorithmListCodec,
  NodeCodec,
  ObjectFormatCodec,
  ObjectFormatListCodec,
  encodeLogParts,
  toObjectFormat,
} from '@memberkit/types';
import { fail, identifierResponse, parseMultipart, partText, trueResponse, xmlPartsResponse, xmlResponse } from '@memberkit/core';
import { CnWrites } from '../cn-writes.js';
import { Reservations } from '../reservation-service.js';
import type { CnRouteModule } from './route-module.js';

/** The checksum algorithms the CN (and memberkit's Member Nodes) compute and accept. */
export const CHECKSUM_ALGORITHMS = ['SHA-1', 'MD5', 'SHA-256'] as const;

/** The v1 Event enumeration (a v1 log shows only these; a v1 filter must name one). */
const V1_EVENTS = ['create', 'read', 'update', 'delete', 'replicate', 'synchronization_failed', 'replication_failed'];

/**
 * CNCore: ping, getCapabilities, listFormats/getFormat, listChecksumAlgorithms,
 * reserveIdentifier/hasReservation/generateIdentifier, getLogRecords and the CN-private
 * create, registerSystemMetadata, updateSystemMetadata, setObsoletedBy, archive, delete.
 */
export const coreRoutes: CnRouteModule = (api, { services, operation, version }) => {
  const writes = new CnWrites(services);
  const reservations = new Reservations(services);
  const id = (c: { req: { param(name: string): string | undefined } }) => c.req.param('id') ?? '';

  const capabilities = operation('CNCore.getCapabilities', async () => xmlResponse(NodeCodec.encode(services.capabilities(), version)));
  api.get('/', capabilities);

  // "as for a Member Node: 200 with a Date header"
  api.get(
    '/monitor/ping',
    operation('CNCore.ping', async () => {
      await services.ping();
      const now = new Date();
      return new Response(null, { status: 200, headers: { Date: now.toUTCString(), Expires: now.toUTCString(), 'Cache-Control': 'no-cache, no-store, must-revalidate' } });
    }),
  );

  api.get(
    '/formats',
    operation('CNCore.listFormats', async () => {
      const objectFormat = (await services.formats.list()).map(toObjectFormat);
      return xmlResponse(ObjectFormatListCodec.encode({ count: objectFormat.length, start: 0, total: objectFormat.length, objectFormat }, version));
    }),
  );

  // "formatId escaped as a path element"
  api.get(
    '/formats/:id{.+}',
    operation('CNCore.getFormat', async (c) => {
      const format = await services.formats.get(id(c));
      if (!format) throw fail('CNCore.getFormat', 'NotFound', `no format '${id(c)}' in this Coordinating Node's list (see GET /formats)`);
      return xmlResponse(ObjectFormatCodec.encode(toObjectFormat(format), version));
    }),
  );

  api.get(
    '/checksum',
    operation('CNCore.listChecksumAlgorithms', async () => xmlResponse(ChecksumAlgorithmListCodec.encode({ algorithm: [...CHECKSUM_ALGORITHMS] }, version))),
  );

  // "the date range is described as fromDate < timestamp <= toDate; precision 1 ms": with
  // millisecond stamps, (from, to] is [from + 1 ms, to + 1 ms) of the event log's query.
  api.get(
    '/log',
    operation('CNCore.getLogRecords', async (c, ctx, q) => {
      const op = 'CNCore.getLogRecords';
      const event = q.string('event');
      if (version === 'v1' && event !== undefined && !V1_EVENTS.includes(event)) throw fail(op, 'InvalidRequest', `event '${event}' is not a v1 Event (${V1_EVENTS.join(', ')})`);
      const idFilter = version === 'v1' ? (q.string('pidFilter') ?? q.string('idFilter')) : (q.string('idFilter') ?? q.string('pidFilter'));
      const fromDate = q.date('fromDate');
      const toDate = q.date('toDate');
      const log = await services.events.getLogRecords(ctx, {
        ...(fromDate ? { fromDate: new Date(fromDate.getTime() + 1) } : {}),
        ...(toDate ? { toDate: new Date(toDate.getTime() + 1) } : {}),
        ...(event ? { event } : {}),
        ...(idFilter ? { idFilter } : {}),
        start: q.nonNegativeInt('start', 0),
        count: q.nonNegativeInt('count', 1000),
      });
      return xmlPartsResponse(c, encodeLogParts(log, version));
    }),
  );

  // reserveIdentifier: "multipart/form-data, form field id"; the federation's clients send `pid`.
  api.post(
    '/reserve',
    operation('CNCore.reserveIdentifier', async (c, ctx) => {
      reservations.assertMayReserve('CNCore.reserveIdentifier', ctx);
      const parts = await parseMultipart('CNCore.reserveIdentifier', c);
      const reserved = await reservations.reserve(ctx, partText(parts, 'pid', 'id'));
      return identifierResponse(c, reserved, version);
    }),
  );

  // hasReservation: `GET /reserve/{id}?subject=` as documented, `GET /reserve/{id}/{subject}` as clients send it.
  const hasReservation = operation('CNCore.hasReservation', async (c, ctx, q) => {
    await reservations.hasReservation(ctx, id(c), c.req.param('subject') ?? q.string('subject'));
    return trueResponse();
  });
  api.get('/reserve/:id/:subject', hasReservation);
  api.get('/reserve/:id', hasReservation);

  api.post(
    '/generate',
    operation('CNCore.generateIdentifier', async (c, ctx) => {
      reservations.assertMayReserve('CNCore.generateIdentifier', ctx);
      const parts = await parseMultipart('CNCore.generateIdentifier', c);
      return identifierResponse(c, await reservations.generate(ctx, partText(parts, 'scheme'), partText(parts, 'fragment')), version);
    }),
  );

  api.post(
    '/object',
    operation('CNCore.create', async (c, ctx) => {
      const op = 'CNCore.create';
      writes.assertPrivileged(op, ctx, 'create');
      const parts = await parseMultipart(op, c, {
        streamName: 'object',
        onStream: (stream) => services.storing.spool(op, stream, ctx.signal),
        onStreamAbandoned: (upload) => upload.pending.abort(),
      });
      const pid = partText(parts, 'pid');
      if (!parts.streamed) throw fail(op, 'InvalidRequest', "the 'object' part is missing", pid ? { pid } : {});
      return identifierResponse(c, await writes.create(ctx, { pid, sysmeta: parts.fields.get('sysmeta'), upload: parts.streamed }), version);
    }),
  );

  api.post(
    '/meta',
    operation('CNCore.registerSystemMetadata', async (c, ctx) => {
      writes.assertPrivileged('CNCore.registerSystemMetadata', ctx, 'registerSystemMetadata');
      const parts = await parseMultipart('CNCore.registerSystemMetadata', c);
      return identifierResponse(c, await writes.registerSystemMetadata(ctx, { pid: partText(parts, 'pid'), sysmeta: parts.fields.get('sysmeta') }), version);
    }),
  );

  if (version === 'v2') {
    api.put(
      '/meta',
      operation('CNCore.updateSystemMetadata', async (c, ctx) => {
        writes.assertPrivileged('CNCore.updateSystemMetadata', ctx, 'updateSystemMetadata');
        const parts = await parseMultipart('CNCore.updateSystemMetadata', c);
        await writes.updateSystemMetadata(ctx, { pid: partText(parts, 'pid'), sysmeta: parts.fields.get('sysmeta') });
        return trueResponse();
      }),
    );
  }

  api.put(
    '/obsoletedBy/:id{.+}',
    operation('CNCore.setObsoletedBy', async (c, ctx) => {
      writes.assertPrivileged('CNCore.setObsoletedBy', ctx, 'setObsoletedBy');
      const parts = await parseMultipart('CNCore.setObsoletedBy', c);
      await writes.setObsoletedBy(ctx, { pid: id(c), obsoletedByPid: partText(parts, 'obsoletedByPid'), serialVersion: partText(parts, 'serialVersion') });
      return trueResponse();
    }),
  );

  api.put(
    '/archive/:id{.+}',
    operation('CNCore.archive', async (c, ctx) => identifierResponse(c, await writes.archive(ctx, id(c), version), version)),
  );

  api.delete(
    '/object/:id{.+}',
    operation('CNCore.delete', async (c, ctx) => identifierResponse(c, await writes.delete(ctx, id(c), version), version)),
  );
};
