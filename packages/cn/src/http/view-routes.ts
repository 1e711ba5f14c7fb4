import { DataONEException, detailCodeFor } from '@memberkit/types';
import type { Operation, OperationRoute } from '@memberkit/core';
import { createViewsExtension } from '@memberkit/views';
import type { CnRouteModule } from './route-module.js';

/** The Member Node view operations and the CN's names for them. */
const CN_OPERATION: Partial<Record<Operation, Operation>> = {
  'MNView.view': 'CNView.view',
  'MNView.listViews': 'CNView.listViews',
};

/**
 * An operation wrapper that serves @memberkit/views' MNView handlers as CNView: the CN's
 * operation names, and the CNView detail codes where the handler raised MNView's.
 */
function asCnView(operation: OperationRoute): OperationRoute {
  return (op, handler) => {
    const cnOp = CN_OPERATION[op] ?? op;
    return operation(cnOp, async (c, ctx, q) => {
      try {
        return await handler(c, ctx, q);
      } catch (err) {
        if (DataONEException.is(err) && cnOp !== op && err.detailCode === detailCodeFor(op, err.exceptionName)) {
          throw err.withDetailCode(detailCodeFor(cnOp, err.exceptionName) ?? '0');
        }
        throw err;
      }
    });
  };
}

/**
 * CNView (v2.0): "listViews: OptionList with required theme 'default'; view: rendered view,
 * default HTML; unrecognized theme renders with the default theme". The landing pages of
 * @memberkit/views over the CN's copies: science metadata and resource maps are held here;
 * data members are described from their system metadata.
 */
export const viewRoutes: CnRouteModule = (api, { services, operation, version }) => {
  if (version !== 'v2') return;
  // Data is held by Member Nodes: downloads go through CNRead.resolve, which redirects to one.
  const views = createViewsExtension({ baseURL: () => services.config.node.baseURL, downloads: 'resolve' });
  views.routes!(api, version, {
    operation: asCnView(operation),
    objects: services.objects,
    access: services.access,
    events: services.events,
    metadata: services.metadata,
    storage: services.storage,
    logger: services.logger,
  });
};
