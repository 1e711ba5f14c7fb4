import { describe, it, type TestContext } from 'vitest';
import type { SuiteContext, SuiteOptions } from './suite-context.js';

/** What a suite body uses to declare its tests (internal). */
export interface Harness<T> {
  /** A describe block, for grouping in the report only (skip keys are test titles). */
  group(title: string, body: () => void): void;
  /**
   * A test that gets a fresh instance from the context and destroys it afterwards.
   * `title` MUST be unique within the suite: it is the key of `SuiteOptions.skip`.
   */
  test(title: string, body: (instance: T, tc: TestContext) => Promise<void>, timeout?: number): void;
}

/** Declare one suite: a describe block whose tests honour `options.skip`. */
export function defineSuite<T>(
  suiteTitle: string,
  ctx: SuiteContext<T>,
  options: SuiteOptions | undefined,
  body: (h: Harness<T>) => void,
): void {
  const skip = options?.skip ?? {};
  const titles = new Set<string>();
  describe(suiteTitle, () => {
    const h: Harness<T> = {
      group: (title, fn) => describe(title, fn),
      test: (title, fn, timeout) => {
        if (titles.has(title)) throw new Error(`testkit: duplicate test title "${title}"`);
        titles.add(title);
        const reason = Object.hasOwn(skip, title) ? skip[title] : undefined;
        if (reason !== undefined && reason.trim() !== '') {
          // Reported as skipped, with its reason, never as passed.
          it.skip(`${title} [opted out: ${reason.trim()}]`, () => undefined);
          return;
        }
        it(title, async (tc) => {
          const instance = await ctx.create();
          try {
            await fn(instance, tc);
          } catch (error) {
            await ctx.destroy?.(instance).catch(() => undefined);
            throw error;
          }
          await ctx.destroy?.(instance);
        }, timeout);
      },
    };
    body(h);

    const unknown = Object.keys(skip).filter((name) => !titles.has(name));
    const unexplained = Object.entries(skip).filter(([, reason]) => typeof reason !== 'string' || reason.trim() === '').map(([name]) => name);
    if (unknown.length > 0 || unexplained.length > 0) {
      it('options.skip names only existing tests, each with a reason', () => {
        const problems = [
          ...unknown.map((name) => `no test is titled "${name}"`),
          ...unexplained.map((name) => `"${name}" has no written reason`),
        ];
        throw new Error(`testkit: invalid options.skip: ${problems.join('; ')}`);
      });
    }
  });
}

/** Skip the running test (reported as skipped with `note`) unless `condition` holds. */
export function requireCapability(tc: TestContext, condition: boolean, note: string): void {
  if (!condition) tc.skip(note);
}
