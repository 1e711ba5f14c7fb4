import type { DialectSql } from '@memberkit/adapter-sql';
import type { CnSchemaArea } from '../store/cn-migrations.js';

/**
 * The node registry's tables (area 'registry'):
 *
 * `mk_cn_nodes`, one row per registered node:
 * - `identifier`: the node reference (`urn:node:...`), primary key;
 * - `base_url`: the baseURL normalised (scheme and host lower case, default port and trailing
 *   slashes dropped), UNIQUE: two entries never point at one service;
 * - `node_type`: `mn` or `cn`, kept from registration (updateNodeCapabilities never changes it);
 * - `document`: the Node document as the CN serves it (v2 XML, CN-owned fields included:
 *   ping, synchronization lastHarvested / lastCompleteHarvest);
 * - `approved` (0/1), `approved_at`: set by `memberkit cn approve-node` (or auto-approval);
 *   listNodes shows approved nodes only;
 * - `registered`, `updated` (ms since the epoch), `registered_by`: the registering subject.
 */
export const registrySchema: CnSchemaArea = {
  name: 'registry',
  migrations: (d: DialectSql) => [
    [
      `CREATE TABLE mk_cn_nodes (
        identifier    ${d.identifierType} NOT NULL PRIMARY KEY,
        base_url      ${d.identifierType} NOT NULL,
        node_type     ${d.shortType} NOT NULL,
        document      ${d.longTextType} NOT NULL,
        approved      INTEGER NOT NULL DEFAULT 0,
        approved_at   BIGINT NULL,
        registered    BIGINT NOT NULL,
        updated       BIGINT NOT NULL,
        registered_by ${d.subjectType} NOT NULL
      )${d.tableSuffix}`,
      'CREATE UNIQUE INDEX mk_cn_nodes_base_url ON mk_cn_nodes (base_url)',
    ],
  ],
};
