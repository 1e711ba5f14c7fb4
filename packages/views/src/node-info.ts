import { NodeCodec } from '@memberkit/types';

/** What pages say about the node serving them, from its own Node document (getCapabilities). */
export interface NodeInfo {
  identifier: string;
  name: string;
  baseURL: string;
  /** Coordinating Nodes harvest this node (`synchronize="true"`). */
  synchronize: boolean;
}

/** How long the Node document read is kept (the configuration changes only with a restart). */
const TTL_MS = 60_000;

/**
 * The Node document as the node serves it, asked in-process of the API version's routes
 * (`GET /node`, as any client would, without a network round trip), decoded, cached a
 * minute. Undefined when it cannot be had (pages then go without the node's name).
 */
export function nodeInfoReader(fetchNode: () => Promise<Response> | Response): () => Promise<NodeInfo | undefined> {
  let cached: { at: number; value: Promise<NodeInfo | undefined> } | undefined;
  return () => {
    if (!cached || Date.now() - cached.at > TTL_MS) {
      const value = (async (): Promise<NodeInfo | undefined> => {
        const res = await fetchNode();
        if (res.status !== 200) return undefined;
        const node = NodeCodec.decode(new Uint8Array(await res.arrayBuffer()));
        return { identifier: node.identifier, name: node.name, baseURL: node.baseURL, synchronize: node.synchronize };
      })().catch(() => undefined);
      cached = { at: Date.now(), value };
    }
    return cached.value;
  };
}
