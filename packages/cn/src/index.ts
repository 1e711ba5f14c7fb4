/**
 * @memberkit/cn: a DataONE Coordinating Node on memberkit's core and store layer (issue #20,
 * part 1): CNCore, CNRead, CNAuthorization, CNIdentity, CNRegister, CNDiagnostic, CNView.
 */
export * from './config.js';
export * from './ports.js';
export type { CnServices } from './services.js';
export type { CnRouteContext, CnRouteModule } from './http/route-module.js';
export { addFormatToFolder } from './admin.js';
export { createCoordinatingNode, createCnApp, migrateCoordinatingNode, type CoordinatingNode, type CoordinatingNodeOptions } from './cn-node.js';
export { coordinatingNodeDocument } from './capabilities.js';
export { emptyNodeDirectory, selfOnlySubjectDirectory } from './defaults.js';
export { migrateCnAreas, sqlLiteral, type CnSchemaArea } from './store/cn-migrations.js';
export { FormatStore } from './store/formats.js';
export { ReservationStore, type Reservation, type ReserveOutcome } from './store/reservations.js';
export {
  CN_CONFIG_FILE_NAME, CN_DEV_ADMIN, CnConfigError, createCnParts, declaresCoordinatingNode, initCnFolder, isCnConfigFile,
  loadCnFolder, parseCnConfig, resolveCnPath, toCnConfig, type LoadedCnFolder,
} from './cn-folder.js';
export { NodeRegistry, type NodeEntry, type RegistryConflict } from './registry/node-registry.js';
export { approveNodeInFolder, listNodesInFolder } from './registry/approve-node.js';
export { loadTokenKey, signToken, keySetDocument, type CnTokenKey, type SignTokenOptions } from './tokens/token-key.js';
export { tokenFromFolder, type FolderTokenOptions } from './tokens/folder-token.js';
