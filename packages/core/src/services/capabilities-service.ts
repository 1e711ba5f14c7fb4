import { inject, injectable } from 'inversify';
import type { CatalogueAdapter, Node, Service, StorageAdapter } from '@memberkit/types';
import type { CoreConfig } from '../config.js';
import { TOKENS } from '../tokens.js';

/**
 * getCapabilities: the Node document. Services come from what the adapters declare: a
 * read-only archive advertises MNStorage as unavailable, as tus advertises only the
 * extensions its store implements.
 */
@injectable()
export class CapabilitiesService {
  constructor(
    @inject(TOKENS.Config) private readonly config: CoreConfig,
    @inject(TOKENS.Storage) private readonly storage: StorageAdapter,
    @inject(TOKENS.Catalogue) private readonly metadata: CatalogueAdapter,
    @inject(TOKENS.ExtensionServices) private readonly extensionServices: ReadonlyArray<{ name: string; versions: readonly ('v1' | 'v2')[] }>,
  ) {}

  node(): Node {
    const n = this.config.node;
    const writable = this.storage.capabilities.write && this.metadata.capabilities.write;
    const api = (name: string, available: boolean): Service[] =>
      (['v1', 'v2'] as const).map((version) => ({ name, version, available, restriction: [] }));
    return {
      replicate: n.replicate,
      synchronize: n.synchronize,
      type: 'mn',
      state: 'up',
      identifier: n.identifier,
      name: n.name,
      description: n.description,
      baseURL: n.baseURL,
      services: {
        service: [
          ...api('MNCore', true),
          ...api('MNRead', true),
          ...api('MNAuthorization', true),
          ...api('MNStorage', writable),
          // A Coordinating Node sends replicas only to a node that advertises MNReplication:
          // derived from what the node can do (replicate on, a CN to answer to, writable storage).
          ...api('MNReplication', n.replicate && this.config.federation !== undefined && writable),
          ...this.extensionServices.flatMap((s) => s.versions.map((version) => ({ name: s.name, version, available: true, restriction: [] }))),
        ],
      },
      synchronization: { schedule: n.schedule },
      ping: { success: true },
      subject: [n.subject],
      contactSubject: n.contactSubject,
      property: Object.entries(n.properties ?? {}).map(([key, value]) => ({ key, value })),
    };
  }
}
