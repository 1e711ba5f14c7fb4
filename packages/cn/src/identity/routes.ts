import type { Context } from 'hono';
import { DecodeError, GroupCodec, PersonCodec, SubjectInfoCodec, type Group, type Person } from '@memberkit/types';
import { fail, parseMultipart, partText, trueResponse, xmlResponse, type Operation } from '@memberkit/core';
import type { CnRouteModule } from '../http/route-module.js';
import type { CnServices } from '../services.js';
import { IdentityService } from './identity-service.js';
import { IdentityStore } from './identity-store.js';
import { SqlSubjectDirectory } from './subject-directory.js';
import { encodeSubject, subjectFromPart } from './subject-xml.js';

/** The CNIdentity service of a CN's services (one per services object: both API versions share it). */
const identityServices = new WeakMap<CnServices, IdentityService>();
export function identityServiceOf(services: CnServices): IdentityService {
  let service = identityServices.get(services);
  if (!service) {
    const store = new IdentityStore(services.store);
    // The directory sessions expand through, when it is the CN's own; else one over the same tables.
    const directory = services.subjects instanceof SqlSubjectDirectory ? services.subjects : new SqlSubjectDirectory(store);
    service = new IdentityService(store, directory, {
      administrators: services.config.access.administrators,
      isAdministrator: (session) => services.access.isPrivileged(session),
      verifiers: services.config.cn.identity.verifiers,
      mappers: services.config.cn.identity.mappers,
      maxPageSize: services.config.maxPageSize ?? 10_000,
    });
    identityServices.set(services, service);
  }
  return service;
}

/** A parsed multipart body. */
type MultipartResult = Awaited<ReturnType<typeof parseMultipart>>;

/** The subject of the path (decoded once by the router). */
const subjectParam = (c: Context): string => c.req.param('subject') ?? '';

function decodePart<T>(op: Operation, body: MultipartResult, name: string, decode: (xml: string) => T, what: string): T {
  const xml = partText(body, name);
  if (xml === undefined) throw fail(op, 'InvalidRequest', `the request has no '${name}' part: send the ${what} document as the multipart/form-data part named ${name}`);
  try {
    return decode(xml);
  } catch (err) {
    if (DecodeError.is(err)) throw fail(op, 'InvalidRequest', `the ${name} part is not a valid ${what} document: ${err.message}`);
    throw err;
  }
}

function subjectPart(op: Operation, body: MultipartResult, name: string): string {
  const raw = partText(body, name);
  if (raw === undefined) throw fail(op, 'InvalidRequest', `the request has no '${name}' part: send the subject as the multipart/form-data part named ${name}`);
  let subject: string;
  try {
    subject = subjectFromPart(raw);
  } catch (err) {
    if (DecodeError.is(err)) throw fail(op, 'InvalidRequest', `the ${name} part is neither a subject nor a Subject document: ${err.message}`);
    throw err;
  }
  if (subject === '') throw fail(op, 'InvalidRequest', `the ${name} part is empty`);
  return subject;
}

const decodePerson = (xml: string): Person => PersonCodec.decode(xml);
const decodeGroup = (xml: string): Group => GroupCodec.decode(xml);

/** Whether the request carries a body at all (the Python client's verifyAccount sends none). */
function hasBody(c: Context): boolean {
  const length = c.req.header('content-length');
  if (length !== undefined) return Number(length) > 0;
  return c.req.header('transfer-encoding') !== undefined;
}

function isMultipart(c: Context): boolean {
  return /^multipart\/form-data/i.test(c.req.header('content-type') ?? '');
}

/**
 * CNIdentity (v1 and v2): accounts, identity mappings and groups, with the wire shapes of
 * the federation's clients: requestMapIdentity also as `POST /accounts` with a `subject` part
 * and verifyAccount also as a bodiless `PUT /accounts/{subject}` (the Python client's).
 */
export const identityRoutes: CnRouteModule = (api, { services, operation, version }) => {
  const identity = identityServiceOf(services);
  const signalOf = (ctx: { signal?: AbortSignal }) => (ctx.signal ? { signal: ctx.signal } : {});

  // "registerAccount | POST /accounts (person) | new subject"; the Python client's
  // requestMapIdentity posts here too, with a `subject` part and no person.
  const registerAccount = operation('CNIdentity.registerAccount', async (c, ctx) => {
    const body = await parseMultipart('CNIdentity.registerAccount', c, signalOf(ctx));
    if (!body.fields.has('person') && body.fields.has('subject')) {
      await identity.requestMapIdentity(ctx.session, subjectPart('CNIdentity.requestMapIdentity', body, 'subject'));
      return trueResponse();
    }
    const person = decodePart('CNIdentity.registerAccount', body, 'person', decodePerson, 'Person');
    return xmlResponse(encodeSubject(await identity.registerAccount(ctx.session, person)));
  });
  api.post('/accounts', registerAccount);
  api.post('/accounts/', registerAccount);

  // "listSubjects | GET /accounts?query={query}[&status={status}&start={start}&count={count}]"
  const listSubjects = operation('CNIdentity.listSubjects', async (_c, ctx, q) => {
    const query = q.string('query');
    const status = q.string('status');
    const count = q.string('count') === undefined ? undefined : q.nonNegativeInt('count', 0);
    const info = await identity.listSubjects(ctx.session, {
      ...(query !== undefined ? { query } : {}),
      ...(status !== undefined ? { status } : {}),
      start: q.nonNegativeInt('start', 0),
      ...(count !== undefined ? { count } : {}),
    });
    return xmlResponse(SubjectInfoCodec.encode(info, version));
  });
  api.get('/accounts', listSubjects);
  api.get('/accounts/', listSubjects);

  // "mapIdentity | POST /accounts/map (primarySubject, secondarySubject) | boolean"
  api.post(
    '/accounts/map',
    operation('CNIdentity.mapIdentity', async (c, ctx) => {
      const body = await parseMultipart('CNIdentity.mapIdentity', c, signalOf(ctx));
      await identity.mapIdentity(ctx.session, subjectPart('CNIdentity.mapIdentity', body, 'primarySubject'), subjectPart('CNIdentity.mapIdentity', body, 'secondarySubject'));
      return trueResponse();
    }),
  );

  // "removeMapIdentity | DELETE /accounts/map/{subject} | boolean; removes the mapping and its reciprocal entry"
  api.delete(
    '/accounts/map/:subject',
    operation('CNIdentity.removeMapIdentity', async (c, ctx) => {
      await identity.removeMapIdentity(ctx.session, subjectParam(c));
      return trueResponse();
    }),
  );

  // "requestMapIdentity | POST /accounts/pendingmap (subject) | boolean"
  api.post(
    '/accounts/pendingmap',
    operation('CNIdentity.requestMapIdentity', async (c, ctx) => {
      const body = await parseMultipart('CNIdentity.requestMapIdentity', c, signalOf(ctx));
      await identity.requestMapIdentity(ctx.session, subjectPart('CNIdentity.requestMapIdentity', body, 'subject'));
      return trueResponse();
    }),
  );

  // "getPendingMapIdentity | GET /accounts/pendingmap/{subject} | SubjectInfo of the pending mapping"
  api.get(
    '/accounts/pendingmap/:subject',
    operation('CNIdentity.getPendingMapIdentity', async (c, ctx) => xmlResponse(SubjectInfoCodec.encode(await identity.getPendingMapIdentity(ctx.session, subjectParam(c)), version))),
  );

  // "confirmMapIdentity | PUT /accounts/pendingmap/{subject} | boolean; second step by the secondary subject"
  api.put(
    '/accounts/pendingmap/:subject',
    operation('CNIdentity.confirmMapIdentity', async (c, ctx) => {
      await identity.confirmMapIdentity(ctx.session, subjectParam(c));
      return trueResponse();
    }),
  );

  // "denyMapIdentity | DELETE /accounts/pendingmap/{subject} | boolean"
  api.delete(
    '/accounts/pendingmap/:subject',
    operation('CNIdentity.denyMapIdentity', async (c, ctx) => {
      await identity.denyMapIdentity(ctx.session, subjectParam(c));
      return trueResponse();
    }),
  );

  // "verifyAccount | PUT /accounts/verification/{subject} | boolean"
  api.put(
    '/accounts/verification/:subject',
    operation('CNIdentity.verifyAccount', async (c, ctx) => {
      await identity.verifyAccount(ctx.session, subjectParam(c));
      return trueResponse();
    }),
  );

  // "getSubjectInfo | GET /accounts/{subject} | person or group details as SubjectInfo"
  api.get(
    '/accounts/:subject',
    operation('CNIdentity.getSubjectInfo', async (c, ctx) => xmlResponse(SubjectInfoCodec.encode(await identity.getSubjectInfo(ctx.session, subjectParam(c)), version))),
  );

  // "updateAccount | PUT /accounts/{subject} (person) | updated subject"; without a person part
  // (the Python client sends verifyAccount as a bodiless PUT here) it is verifyAccount.
  api.put(
    '/accounts/:subject',
    operation('CNIdentity.updateAccount', async (c, ctx) => {
      const subject = subjectParam(c);
      if (!isMultipart(c)) {
        if (hasBody(c) && (await c.req.text()).trim() !== '') {
          throw fail('CNIdentity.updateAccount', 'InvalidRequest', 'send the Person document as the multipart/form-data part named person (or no body at all to verify the account)');
        }
        await identity.verifyAccount(ctx.session, subject);
        return trueResponse();
      }
      const body = await parseMultipart('CNIdentity.updateAccount', c, signalOf(ctx));
      if (!body.fields.has('person') && body.fields.size === 0) {
        await identity.verifyAccount(ctx.session, subject);
        return trueResponse();
      }
      const person = decodePart('CNIdentity.updateAccount', body, 'person', decodePerson, 'Person');
      return xmlResponse(encodeSubject(await identity.updateAccount(ctx.session, subject, person)));
    }),
  );

  // "createGroup | POST /groups (group) | subject of the new group"
  const createGroup = operation('CNIdentity.createGroup', async (c, ctx) => {
    const body = await parseMultipart('CNIdentity.createGroup', c, signalOf(ctx));
    const group = decodePart('CNIdentity.createGroup', body, 'group', decodeGroup, 'Group');
    return xmlResponse(encodeSubject(await identity.createGroup(ctx.session, group)));
  });
  api.post('/groups', createGroup);
  api.post('/groups/', createGroup);

  // "updateGroup | PUT /groups (group) | boolean; members replace the membership"
  const updateGroup = operation('CNIdentity.updateGroup', async (c, ctx) => {
    const body = await parseMultipart('CNIdentity.updateGroup', c, signalOf(ctx));
    const group = decodePart('CNIdentity.updateGroup', body, 'group', decodeGroup, 'Group');
    await identity.updateGroup(ctx.session, group);
    return trueResponse();
  });
  api.put('/groups', updateGroup);
  api.put('/groups/', updateGroup);
};
