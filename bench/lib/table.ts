// The printed result: one Markdown table row per metric, and the legend that says how to read it.
import type { ResultRow } from './common.js';

export function fmt(n: number | null | undefined): string {
  if (n === null || n === undefined) return '-';
  if (Math.abs(n) >= 1000) return n.toFixed(0);
  if (Math.abs(n) >= 10) return n.toFixed(1);
  return n.toFixed(2);
}

/** `0.52 (0.48…0.55)`: the median of the per-round ratios and their range. */
function ratioCell(median: number | null | undefined, min: number | null | undefined, max: number | null | undefined): string {
  if (median === null || median === undefined) return '-';
  return `${median.toFixed(2)} (${(min ?? median).toFixed(2)}…${(max ?? median).toFixed(2)})`;
}

const signed = (n: number) => `${n > 0 ? '+' : ''}${n.toFixed(1)}`;

function noiseCell(noise: number | null | undefined): string {
  return noise === null || noise === undefined ? '-' : `±${(noise * 100).toFixed(0)}%`;
}

/** Columns: header, alignment (r = numbers), cell. */
type Column = [string, 'l' | 'r', (r: ResultRow) => string];

function render(columns: Column[], rows: ResultRow[]): string {
  const body = rows.map((r) => columns.map(([, , cell]) => cell(r)));
  const widths = columns.map(([h], i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (columns[i]![1] === 'r' ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (columns[i]![1] === 'r' ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`;
  return [line(columns.map(([h]) => h)), rule, ...body.map(line)].join('\n');
}

const common: Column[] = [
  ['scenario', 'l', (r) => r.scenario],
  ['backend', 'l', (r) => r.backend],
  ['metric', 'l', (r) => r.metric],
  ['unit', 'l', (r) => r.unit],
];

export function table(rows: ResultRow[]): string {
  return render(
    [
      ...common,
      ['memberkit', 'r', (r) => fmt(r.memberkit)],
      ['baseline', 'r', (r) => fmt(r.baseline)],
      ['ratio (min…max)', 'r', (r) => ratioCell(r.ratio, r.ratioMin, r.ratioMax)],
      ['noise', 'r', (r) => noiseCell(r.noise)],
      ['baseline is', 'l', (r) => r.baselineName],
    ],
    rows,
  );
}

export function compareTable(rows: ResultRow[], refLabel: string): string {
  return render(
    [
      ...common,
      ['head', 'r', (r) => fmt(r.memberkit)],
      [refLabel, 'r', (r) => fmt(r.ref?.value)],
      ['baseline', 'r', (r) => fmt(r.baseline)],
      ['head/baseline', 'r', (r) => ratioCell(r.ratio, r.ratioMin, r.ratioMax)],
      [`${refLabel}/baseline`, 'r', (r) => ratioCell(r.ref?.ratio?.median, r.ref?.ratio?.min, r.ref?.ratio?.max)],
      [`head vs ${refLabel}`, 'r', (r) => (r.ref?.change ? `${signed(r.ref.change.median)}% (${signed(r.ref.change.min)}…${signed(r.ref.change.max)})` : '-')],
      ['flag', 'l', (r) => r.ref?.flag ?? ''],
    ],
    rows,
  );
}

export function legend(repeat: number, refLabel?: string): string {
  const lines = [
    `Every value is the median of ${repeat} interleaved round(s); in each round every subject runs each measure once, back to back, the order rotating from round to round.`,
    'ratio: memberkit\'s speed relative to the baseline of the same round (1.0 = as fast, below 1 = slower; for ms and MB baseline/memberkit), median over the rounds with the smallest and largest round in brackets.',
  ];
  if (refLabel === undefined) {
    lines.push('noise: half the ratio\'s min…max range relative to its median (±5% = every round within 5% of the median).');
  } else {
    lines.push(
      `head: this checkout (HEAD plus uncommitted changes); ${refLabel}: the --compare commit, built in a temporary worktree and started with its own CLI.`,
      `head vs ${refLabel}: the median of the per-round head/${refLabel} speed ratios as a change in percent (+ = head faster), the range in brackets.`,
      `flag: the change is larger than the noise of both rows (half the min…max range of head/baseline and of ${refLabel}/baseline, relative to their medians).`,
    );
  }
  return lines.join('\n');
}
