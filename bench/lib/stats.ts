// From interleaved samples to a result row: medians per subject, per-round ratios (each
// memberkit sample against the baseline sample of the same round, measured next to it), their
// range, and with --compare the per-round change from the ref to this checkout.
import { median, round, type ResultRow, type Spread, type Subject } from './common.js';

/** What one number of a measure means. */
export interface MetricSpec {
  metric: string;
  unit: string;
  higherIsBetter: boolean;
  /** What the baseline subject is for this metric. */
  baselineName: string;
  note?: string;
}

/**
 * How much faster `a` is than `b` (1.0 = as fast, 2 = twice as fast): a/b for throughputs,
 * b/a for durations. null when either is not a positive number (no speed to compare).
 */
export function speed(a: number, b: number, higherIsBetter: boolean): number | null {
  if (!(a > 0) || !(b > 0) || !Number.isFinite(a) || !Number.isFinite(b)) return null;
  return higherIsBetter ? a / b : b / a;
}

/** Per-round speeds of `a` against `b` (rounds where either sample is missing or zero are left out). */
export function pairedSpeeds(a: number[], b: number[], higherIsBetter: boolean): number[] {
  const out: number[] = [];
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const s = speed(a[i]!, b[i]!, higherIsBetter);
    if (s !== null) out.push(s);
  }
  return out;
}

export function spread(values: number[]): Spread | null {
  if (values.length === 0) return null;
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

/** Half the min–max range relative to the median: ±0.05 means the rounds stayed within ±5 % of it. */
export function noiseOf(s: Spread | null): number | null {
  if (s === null || !(s.median > 0)) return null;
  return (s.max - s.min) / (2 * s.median);
}

/**
 * Whether the change from ref to memberkit is real: its median (as a fraction, +0.12 = 12 %
 * faster) is larger than the noise of memberkit's ratio to the baseline and larger than the
 * noise of the ref's. With a single round there is no noise to compare against: no flag.
 */
export function changeFlag(change: Spread | null, noiseMemberkit: number | null, noiseRef: number | null, rounds: number): 'faster' | 'slower' | null {
  if (change === null || noiseMemberkit === null || noiseRef === null || rounds < 2) return null;
  const c = change.median - 1;
  if (Math.abs(c) <= noiseMemberkit || Math.abs(c) <= noiseRef) return null;
  return c > 0 ? 'faster' : 'slower';
}

const r3 = (s: Spread | null): Spread | null => (s === null ? null : { median: round(s.median), min: round(s.min), max: round(s.max) });
const pct = (s: Spread | null): Spread | null =>
  s === null ? null : { median: Math.round((s.median - 1) * 1000) / 10, min: Math.round((s.min - 1) * 1000) / 10, max: Math.round((s.max - 1) * 1000) / 10 };
/** Median of the finite samples (a subject that cannot report a figure, an older --compare ref, gives NaN). */
const medianOrNull = (values: number[] | undefined): number | null => {
  const finite = values?.filter(Number.isFinite) ?? [];
  return finite.length > 0 ? round(median(finite)) : null;
};
const noiseRounded = (n: number | null): number | null => (n === null ? null : Math.round(n * 1000) / 1000);

/** One result row from a metric's samples (index = round). `ref` samples only with --compare. */
export function summarize(scenario: string, backend: string, spec: MetricSpec, samples: Partial<Record<Subject, number[]>>): ResultRow {
  const mk = samples.memberkit ?? [];
  const bl = samples.baseline ?? [];
  const ratio = spread(pairedSpeeds(mk, bl, spec.higherIsBetter));
  const noise = noiseOf(ratio);
  const row: ResultRow = {
    scenario,
    metric: spec.metric,
    unit: spec.unit,
    backend,
    memberkit: medianOrNull(mk),
    baseline: medianOrNull(bl),
    baselineName: spec.baselineName,
    ratio: ratio === null ? null : round(ratio.median),
    ratioMin: ratio === null ? null : round(ratio.min),
    ratioMax: ratio === null ? null : round(ratio.max),
    noise: noiseRounded(noise),
    higherIsBetter: spec.higherIsBetter,
    ...(spec.note ? { note: spec.note } : {}),
    samples: Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, v.map(round)])),
  };
  if (samples.ref) {
    const refRatio = spread(pairedSpeeds(samples.ref, bl, spec.higherIsBetter));
    const refNoise = noiseOf(refRatio);
    const change = spread(pairedSpeeds(mk, samples.ref, spec.higherIsBetter));
    row.ref = {
      value: medianOrNull(samples.ref),
      ratio: r3(refRatio),
      noise: noiseRounded(refNoise),
      change: pct(change),
      flag: changeFlag(change, noise, refNoise, Math.min(mk.length, samples.ref.length)),
    };
  }
  return row;
}
