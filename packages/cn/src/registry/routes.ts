import type { Context } from 'hono';
import { DecodeError, NodeCodec, NodeListCodec, NodeReferenceCodec, type Node } from '@memberkit/types';
import { fail, parseMultipart, partText, trueResponse, xmlResponse, type Operation } from '@memberkit/core';
import type { CnRouteModule } from '../http/route-module.js';
import type { CnServices } from '../services.js';
import { NodeRegistry } from './node-registry.js';
import { CnRegisterService } from './register-service.js';

/** The registry of `services`: the CN's own (services.nodes), or one over its store when another directory was given. */
export function nodeRegistryOf(services: CnServices): NodeRegistry {
  return services.nodes instanceof NodeRegistry ? services.nodes : new NodeRegistry(services.store);
}

/** The CNRegister service of a CN's services (one per services object: both API versions share it). */
const registerServices = new WeakMap<CnServices, CnRegisterService>();
export function registerServiceOf(services: CnServices): CnRegisterService {
  let service = registerServices.get(services);
  if (!service) {
    service = new CnRegisterService({
      registry: nodeRegistryOf(services),
      selfNode: () => services.capabilities(),
      subjects: services.subjects,
      isAdministrator: (session) => services.access.isPrivileged(session),
      registration: services.config.cn.registration,
      logger: services.logger,
    });
    registerServices.set(services, service);
  }
  return service;
}

/** The `node` part of a register / updateNodeCapabilities body, decoded. */
async function nodePart(op: Operation, c: Context, signal: AbortSignal | undefined): Promise<Node> {
  const body = await parseMultipart(op, c, signal ? { signal } : {});
  const xml = partText(body, 'node');
  if (xml === undefined) throw fail(op, 'InvalidRequest', 'the request has no `node` part: send the Node document as the multipart/form-data part named node');
  try {
    return NodeCodec.decode(xml);
  } catch (err) {
    if (err instanceof DecodeError) throw fail(op, 'InvalidRequest', `the node part is not a valid Node document: ${err.message}`);
    throw err;
  }
}

/** The node identifier of the path (decoded once by the router). */
const nodeId = (c: Context): string => c.req.param('nodeId') ?? '';

/**
 * CNCore.listNodes and CNRegister: `GET /node`, `POST /node`, `GET /node/{nodeid}`,
 * `PUT /node/{nodeid}`.
 */
export const registryRoutes: CnRouteModule = (api, { services, operation, version }) => {
  const register = registerServiceOf(services);

  // "nodeList of all registered nodes": the approved ones and the CN itself.
  api.get('/node', operation('CNCore.listNodes', async () => xmlResponse(NodeListCodec.encode(await register.listNodes(), version))));

  api.get('/node/:nodeId', operation('CNRegister.getNodeCapabilities', async (c) => xmlResponse(NodeCodec.encode(await register.getNodeCapabilities(nodeId(c)), version))));

  // "register [1.0, 2.0] | POST /node | node | identifier of the new node entry": a NodeReference.
  api.post(
    '/node',
    operation('CNRegister.register', async (c, ctx) => {
      register.requireSession('CNRegister.register', ctx.session);
      const node = await nodePart('CNRegister.register', c, ctx.signal);
      const id = await register.register(ctx.session, node);
      return xmlResponse(NodeReferenceCodec.encode(id, version));
    }),
  );

  api.put(
    '/node/:nodeId',
    operation('CNRegister.updateNodeCapabilities', async (c, ctx) => {
      register.requireSession('CNRegister.updateNodeCapabilities', ctx.session);
      const node = await nodePart('CNRegister.updateNodeCapabilities', c, ctx.signal);
      await register.updateNodeCapabilities(ctx.session, nodeId(c), node);
      return trueResponse();
    }),
  );
};
