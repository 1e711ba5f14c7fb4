import type { StorageAdapter, StorageKey } from '@memberkit/types';

/**
 * How a suite gets the instance under test. `create` MUST return a fresh instance that is
 * already opened (its `open()` awaited) and isolated from every other instance the suite
 * creates: a new directory, database file, schema or bucket prefix. The write-capable
 * metadata and event-log suites also expect it to start empty.
 */
export interface SuiteContext<T> {
  /** A fresh, opened instance; called once per test. */
  create(): Promise<T>;
  /** Close the instance and remove what `create` made. Called after every test, also failed ones. */
  destroy?(instance: T): Promise<void>;
}

/**
 * The storage suite's context. A read-only adapter (capabilities.write false, a wrapped
 * archive) cannot be written through the port, so the factory provides `seed`: put `bytes`
 * into the backend behind the adapter's back (write a file under the tree, put an S3
 * object) and return the key under which `instance` now finds them.
 *
 * The suite writes through `write` + `commit` when capabilities.write is true, and uses
 * `seed` otherwise; a read-only adapter without `seed` fails the tests that need data.
 */
export interface StorageSuiteContext extends SuiteContext<StorageAdapter> {
  /**
   * Make `bytes` readable by `instance`. `name` is a suggestion for the location, made of
   * `[A-Za-z0-9._-]` and `/` only (e.g. `seed/3/object.bin`); the returned key is what the
   * suite passes to stat/read/list/delete. Each call gets a distinct `name`.
   */
  seed?(instance: StorageAdapter, name: string, bytes: Uint8Array): Promise<StorageKey>;
}

export interface SuiteOptions {
  /**
   * Tests to skip, by test name (the exact title the suite gives to `it`), each with a
   * written reason. Skipped tests are reported as skipped, with the reason, never as
   * passed. A name that matches no test fails the suite (so a renamed test cannot
   * silently stay skipped), as does an empty reason.
   */
  skip?: Record<string, string>;
}
