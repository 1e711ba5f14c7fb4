// Interleaved rounds: in every round each measure runs once for every subject, back to back,
// the subjects' order rotating from round to round (memberkit first, then the ref or the
// baseline first, ...). A sample is only ever compared with the samples of its own round, so
// a load that comes and goes on a shared machine moves both sides of a ratio together.
import { log, type ResultRow, type Subject } from './common.js';
import { summarize, type MetricSpec } from './stats.js';

/** One measured part of a scenario: a run for one subject yields one number per metric. */
export interface Measure {
  metrics: MetricSpec[];
  run(subject: Subject, round: number): Promise<number[]>;
}

/** The order of round `round`: `subjects` rotated left by `round`. */
export function roundOrder(subjects: readonly Subject[], round: number): Subject[] {
  const k = round % subjects.length;
  return [...subjects.slice(k), ...subjects.slice(0, k)];
}

export async function interleave(scenario: string, backend: string, subjects: readonly Subject[], repeat: number, measures: Measure[]): Promise<ResultRow[]> {
  const samples = measures.map((m) => m.metrics.map(() => Object.fromEntries(subjects.map((s) => [s, [] as number[]])) as Partial<Record<Subject, number[]>>));
  for (let round = 0; round < repeat; round++) {
    const order = roundOrder(subjects, round);
    const t0 = performance.now();
    for (const [i, measure] of measures.entries()) {
      for (const subject of order) {
        const values = await measure.run(subject, round);
        if (values.length !== measure.metrics.length) throw new Error(`${scenario}: a measure returned ${values.length} values for ${measure.metrics.length} metrics`);
        values.forEach((v, k) => samples[i]![k]![subject]!.push(v));
      }
    }
    log(`${scenario} [${backend}]: round ${round + 1}/${repeat} (${order.join(', ')}) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  return measures.flatMap((m, i) => m.metrics.map((spec, k) => summarize(scenario, backend, spec, samples[i]![k]!)));
}
