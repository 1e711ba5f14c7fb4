import type { Hono } from 'hono';
import { fail, type Operation } from '../errors.js';
import type { OperationRoute } from '../extension.js';

/**
 * Optional APIs no extension provides answer NotImplemented (a DataONE error document, not
 * a 404 page). Registered after extensions' routes, so an extension's route wins.
 */
export function registerUnavailableApis(app: Hono, operation: OperationRoute): void {
  const notImplemented = (op: Operation, what: string) =>
    operation(op, async () => {
      throw fail(op, 'NotImplemented', `${what} is not offered by this node (see getCapabilities)`);
    });
  app.get('/query', notImplemented('MNQuery.listQueryEngines', 'MNQuery'));
  app.get('/query/*', notImplemented('MNQuery.query', 'MNQuery'));
  app.post('/query/*', notImplemented('MNQuery.query', 'MNQuery'));
  app.get('/views', notImplemented('MNView.listViews', 'MNView'));
  app.get('/view', notImplemented('MNView.listViews', 'MNView'));
  app.get('/views/*', notImplemented('MNView.view', 'MNView'));
  app.get('/packages/*', notImplemented('MNPackage.getPackage', 'MNPackage'));
}
