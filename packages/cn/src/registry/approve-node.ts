import { createCnParts, CnConfigError, loadCnFolder } from '../cn-folder.js';
import { migrateCoordinatingNode } from '../cn-node.js';
import { NodeRegistry } from './node-registry.js';

/**
 * `memberkit cn approve-node ID DIR`: approve a registered node in the CN's database (a
 * running CN lists it at once: listNodes reads the table). 'already' when it was approved;
 * a CnConfigError naming the registered nodes when `nodeId` is not one of them.
 */
export async function approveNodeInFolder(dir: string, nodeId: string, options: { configFile?: string } = {}): Promise<'approved' | 'already'> {
  const loaded = loadCnFolder({ dir, ...(options.configFile ? { configFile: options.configFile } : {}) });
  const { catalogue } = createCnParts(loaded);
  await catalogue.open();
  try {
    await migrateCoordinatingNode(catalogue);
    const registry = new NodeRegistry(catalogue.store);
    const outcome = await registry.approve(nodeId);
    if (outcome !== 'missing') return outcome;
    const all = await registry.list({ includeUnapproved: true });
    const known = all.map((e) => `${e.node.identifier}${e.approved ? '' : ' (waiting)'}`).join(', ');
    throw new CnConfigError(`no node '${nodeId}' is registered with the Coordinating Node in ${dir} (${known === '' ? 'no node is registered yet: a node registers with `memberkit register`' : `registered: ${known}`})`);
  } finally {
    await catalogue.close();
  }
}

/** The registered nodes of a CN folder, approved or not (`memberkit cn nodes`). */
export async function listNodesInFolder(dir: string, options: { configFile?: string } = {}): Promise<Array<{ identifier: string; baseURL: string; approved: boolean; registered: Date; registeredBy: string }>> {
  const loaded = loadCnFolder({ dir, ...(options.configFile ? { configFile: options.configFile } : {}) });
  const { catalogue } = createCnParts(loaded);
  await catalogue.open();
  try {
    await migrateCoordinatingNode(catalogue);
    const all = await new NodeRegistry(catalogue.store).list({ includeUnapproved: true });
    return all.map((e) => ({ identifier: e.node.identifier, baseURL: e.node.baseURL, approved: e.approved, registered: e.registered, registeredBy: e.registeredBy }));
  } finally {
    await catalogue.close();
  }
}
