import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchOptions, ResultRow } from './common.js';

export interface ScenarioContext {
  options: BenchOptions;
  /** A fresh temporary folder for this scenario (removed by the runner). */
  tmp: string;
  /** A new sub-folder of tmp. */
  folder(name: string): string;
}

export interface Scenario {
  name: string;
  description: string;
  run(ctx: ScenarioContext): Promise<ResultRow[]>;
}

export function scenarioContext(options: BenchOptions, tmp: string): ScenarioContext {
  return { options, tmp, folder: (name) => mkdtempSync(join(tmp, `${name}-`)) };
}
