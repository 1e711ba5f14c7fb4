import { NodeCodec } from '@memberkit/types';
import { xmlResponse } from '@memberkit/core';
import type { CnRouteModule } from './route-module.js';

/** CNCore: ping, getCapabilities. */
export const coreRoutes: CnRouteModule = (api, { services, operation, version }) => {
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
};
