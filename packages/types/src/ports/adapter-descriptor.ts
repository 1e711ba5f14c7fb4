/**
 * How an adapter package offers itself to `memberkit serve`: a descriptor per kind of storage
 * (`storage.type`) or catalogue (`catalogue.type`), each a configuration schema and a factory.
 * The CLI loads the packages named in the configuration and selects a descriptor by `type`,
 * so a generated or third-party adapter is served without editing the CLI.
 *
 * Types only (importing this costs nothing at run time). This leaf does not depend on a schema library: a schema is anything implementing Standard
 * Schema (https://standardschema.dev; zod 4 does). The CLI reads zod's own introspection (and
 * the metadata `doc` writes into zod's global registry) to document options.
 */
import type { EventLogStore } from './event-log.js';
import type { JobStore } from './job-store.js';
import type { CatalogueAdapter } from './catalogue-adapter.js';
import type { ScanStateStore } from './scan-state.js';
import type { StorageAdapter } from './storage-adapter.js';

/** The validating part of Standard Schema v1, as the CLI uses it. */
export interface OptionsSchema<Output = unknown> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    validate(value: unknown): StandardResult<Output> | Promise<StandardResult<Output>>;
    readonly types?: { readonly input: unknown; readonly output: Output } | undefined;
  };
}

export type StandardResult<Output> =
  | { readonly value: Output; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<{ readonly message: string; readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined }> };

/** The validated options of a schema. */
export type OptionsOf<S> = S extends OptionsSchema<infer O> ? O : never;

/** The structured logger the node writes to (pino's interface). */
export interface DescriptorLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
}

/** What the CLI gives a factory. */
export interface DescriptorContext {
  /** Resolve a configured path against the configuration file's folder (absolute paths unchanged). */
  resolvePath(path: string): string;
  logger: DescriptorLogger;
  /** The catalogue's scan state (wrap mode); throws when the catalogue keeps none. */
  scanState(): ScanStateStore;
  /**
   * Build (not open) another storage by its configuration section, e.g. `{ type: 'tree', root }`
   * for the files of a mapped catalogue, without depending on the package that offers it.
   */
  createStorage(section: { type: string } & Record<string, unknown>): Promise<StorageAdapter>;
}

/**
 * A kind of storage. `create` MUST NOT open the adapter (the node opens and closes it) and
 * SHOULD import the adapter's implementation lazily, so that a command that never serves
 * (`--help`, `token`) does not load it.
 */
export interface StorageDescriptor<O = unknown> {
  /** The `storage.type` value that selects it; unique across the loaded packages. */
  type: string;
  /** One line for the documentation (`### "type": "x": description`). */
  description: string;
  /** The other keys of the `storage` section; defaults fill in. */
  options: OptionsSchema<O>;
  create(options: O, ctx: DescriptorContext): Promise<StorageAdapter> | StorageAdapter;
  /**
   * Wrap mode: the storage lists an existing archive (entries with versions) that the core's
   * wrap scanner publishes. Default false: a `wrap` section is refused with this storage.
   */
  wrappable?: boolean;
}

/** The stores of a catalogue; the node opens and closes each. */
export interface CatalogueParts {
  metadata: CatalogueAdapter;
  /**
   * The event log (getLogRecords). Absent: the CLI keeps one in an embedded SQLite file
   * beside the configuration (`memberkit-events.db`).
   */
  eventLog?: EventLogStore;
  /** Durable jobs (replication); required for a `federation` section. */
  jobs?: JobStore;
  /** Scan state in the catalogue's own store (wrap mode); several processes share it. */
  scanState?: ScanStateStore;
}

/** A kind of catalogue (`catalogue.type`). Same obligations as StorageDescriptor. */
export interface CatalogueDescriptor<O = unknown> {
  type: string;
  description: string;
  options: OptionsSchema<O>;
  create(options: O, ctx: DescriptorContext): Promise<CatalogueParts> | CatalogueParts;
}

/**
 * What an adapter package exports as `memberkitBackends`, from its `./backends` subpath when it
 * has one (light: the schema library and @memberkit/types only), else from its main entry.
 */
export interface MemberkitBackends {
  storage?: ReadonlyArray<StorageDescriptor>;
  catalogue?: ReadonlyArray<CatalogueDescriptor>;
}

/**
 * Documentation of a configuration key, read by the CLI to write CONFIGURATION.md (so the
 * reference cannot drift from what the schema accepts). With zod 4, attach it with
 * `schema.meta({ description: '...' } satisfies KeyDoc)` (zod's global registry). `shownDefault`
 * replaces a computed default.
 */
export interface KeyDoc {
  description: string;
  shownDefault?: string;
  /** Document the object as one row, not key by key. */
  leaf?: boolean;
}
