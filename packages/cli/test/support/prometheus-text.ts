/**
 * A strict parser of the Prometheus text exposition format (0.0.4), for tests: every sample
 * belongs to a family declared by `# TYPE` before it, names and label sets are well formed,
 * values are numbers, histograms have cumulative buckets ending at le="+Inf" equal to _count.
 * Anything else throws with the line number.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help?: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function parseValue(text: string, where: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`${where}: "${text}" is not a number`);
  return Number(text);
}

function parseLabels(text: string, where: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf('=', i);
    if (eq < 0) throw new Error(`${where}: label without '='`);
    const name = text.slice(i, eq).trim();
    if (!LABEL_NAME.test(name)) throw new Error(`${where}: bad label name "${name}"`);
    if (name in labels) throw new Error(`${where}: label ${name} repeated`);
    if (text[eq + 1] !== '"') throw new Error(`${where}: label value of ${name} is not quoted`);
    let value = '';
    let j = eq + 2;
    for (; j < text.length && text[j] !== '"'; j++) {
      if (text[j] === '\\') {
        const next = text[++j];
        if (next === 'n') value += '\n';
        else if (next === '\\' || next === '"') value += next;
        else throw new Error(`${where}: bad escape \\${next}`);
      } else value += text[j];
    }
    if (text[j] !== '"') throw new Error(`${where}: unterminated label value`);
    labels[name] = value;
    i = j + 1;
    if (text[i] === ',') i++;
    else if (i < text.length) throw new Error(`${where}: expected ',' after label ${name}`);
  }
  return labels;
}

/** The family a sample name belongs to (histogram and summary samples carry suffixes). */
function familyOf(families: Map<string, Family>, name: string): Family | undefined {
  if (families.has(name)) return families.get(name);
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!name.endsWith(suffix)) continue;
    const f = families.get(name.slice(0, -suffix.length));
    if (f && (f.type === 'histogram' || (f.type === 'summary' && suffix !== '_bucket'))) return f;
  }
  return undefined;
}

export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const lines = text.split('\n');
  lines.forEach((line, index) => {
    const where = `line ${index + 1}`;
    if (line.trim() === '') return;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) return; // a plain comment
      const [, kind, name, rest] = m as unknown as [string, string, string, string];
      if (!NAME.test(name)) throw new Error(`${where}: bad metric name "${name}"`);
      const family = families.get(name) ?? { name, type: 'untyped' as const, samples: [] };
      if (kind === 'TYPE') {
        if (!TYPES.has(rest)) throw new Error(`${where}: unknown type "${rest}"`);
        if (family.samples.length > 0) throw new Error(`${where}: TYPE of ${name} after its samples`);
        family.type = rest as Family['type'];
      } else family.help = rest;
      families.set(name, family);
      return;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)( -?\d+)?$/.exec(line);
    if (!m) throw new Error(`${where}: not a sample: ${line}`);
    const [, name, , labelText, valueText] = m as unknown as [string, string, string | undefined, string | undefined, string];
    const family = familyOf(families, name);
    if (!family) throw new Error(`${where}: sample ${name} has no # TYPE before it`);
    family.samples.push({ name, labels: labelText ? parseLabels(labelText, where) : {}, value: parseValue(valueText, where) });
  });
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;
}

function checkHistogram(f: Family): void {
  const series = new Map<string, Sample[]>();
  for (const s of f.samples.filter((s) => s.name === `${f.name}_bucket`)) {
    const { le, ...rest } = s.labels;
    if (le === undefined) throw new Error(`${f.name}: bucket without le`);
    const key = JSON.stringify(rest);
    series.set(key, [...(series.get(key) ?? []), s]);
  }
  for (const [key, buckets] of series) {
    let previous = -Infinity;
    let count = -1;
    for (const b of buckets) {
      if (b.value < count) throw new Error(`${f.name}${key}: buckets not cumulative`);
      const le = parseValue(b.labels.le!, f.name);
      if (le <= previous) throw new Error(`${f.name}${key}: le not increasing`);
      previous = le;
      count = b.value;
    }
    if (previous !== Infinity) throw new Error(`${f.name}${key}: no le="+Inf" bucket`);
    const total = f.samples.find((s) => s.name === `${f.name}_count` && JSON.stringify(s.labels) === key);
    if (!total || total.value !== count) throw new Error(`${f.name}${key}: _count differs from the +Inf bucket`);
  }
}
