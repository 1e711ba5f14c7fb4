import type { Node, ObjectLocation, ObjectLocationList, StoredSystemMetadata } from '@memberkit/types';
import type { NodeDirectory } from './ports.js';

/** Node states in the order resolve lists them: "up first". */
const STATE_RANK: Record<string, number> = { up: 0, unknown: 1, down: 2 };

/** The versions of `api` a node's document lists (e.g. MNRead: ['v1', 'v2']). */
export function serviceVersions(node: Node, api: string): string[] {
  const versions = (node.services?.service ?? []).filter((s) => s.name === api && s.available !== false).map((s) => s.version);
  return [...new Set(versions)].sort();
}

/** True when the node speaks v2 of the Member Node API (its document lists a v2 MN service). */
export function speaksV2(node: Node): boolean {
  return (node.services?.service ?? []).some((s) => s.name.startsWith('MN') && s.version === 'v2');
}

/**
 * resolve: where an object's copies are, as an ObjectLocationList. The authoritative Member
 * Node and the nodes of completed replicas (invalidated, failed and pending replicas are
 * not copies), each known to the node registry (approved), ordered by node state (up first)
 * and, among nodes of one state, the authoritative node first. `url` is the full get URL on
 * the node, in the highest MNRead version it lists.
 */
export async function objectLocations(nodes: NodeDirectory, sysmeta: StoredSystemMetadata): Promise<ObjectLocationList> {
  const candidates = [
    ...(sysmeta.authoritativeMemberNode ? [sysmeta.authoritativeMemberNode] : []),
    ...sysmeta.replica.filter((r) => r.replicationStatus === 'completed').map((r) => r.replicaMemberNode),
  ];
  const seen = new Set<string>();
  const found: Array<{ location: ObjectLocation; rank: number; order: number }> = [];
  for (const [order, nodeId] of candidates.entries()) {
    if (seen.has(nodeId)) continue;
    seen.add(nodeId);
    const registered = await nodes.get(nodeId);
    if (!registered || !registered.approved) continue;
    const node = registered.node;
    const versions = serviceVersions(node, 'MNRead');
    const version = versions.length > 0 ? versions : ['v1'];
    const baseURL = node.baseURL.replace(/\/+$/, '');
    found.push({
      location: { nodeIdentifier: node.identifier, baseURL: node.baseURL, version, url: `${baseURL}/${version.at(-1)}/object/${encodeURIComponent(sysmeta.identifier)}` },
      rank: STATE_RANK[node.state] ?? 1,
      order,
    });
  }
  found.sort((a, b) => a.rank - b.rank || a.order - b.order);
  return { identifier: sysmeta.identifier, objectLocation: found.map((f) => f.location) };
}
