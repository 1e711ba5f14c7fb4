import type { z } from 'zod';

/**
 * Turning what is wrong with a memberkit.config.json into lines an operator can act on:
 * one line per problem, naming the key path, and for an unknown key the nearest valid one.
 */

/** Levenshtein distance, case-insensitive (keys are short; no need for anything clever). */
export function editDistance(a: string, b: string): number {
  a = a.toLowerCase();
  b = b.toLowerCase();
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length]!;
}

/** The known key closest to `key`, when it is close enough to be a likely typo. */
export function nearestKey(key: string, known: readonly string[]): string | undefined {
  let best: { key: string; d: number } | undefined;
  for (const k of known) {
    const d = editDistance(key, k);
    if (!best || d < best.d) best = { key: k, d };
  }
  // A third of the key's length (at least 2 edits) still reads as a typo; more is another word.
  if (best && best.d <= Math.max(2, Math.floor(key.length / 3))) return best.key;
  // A key that contains a known one, or the reverse (rescanInterval vs rescanIntervalSeconds).
  return known.find((k) => k.toLowerCase().includes(key.toLowerCase()) || key.toLowerCase().includes(k.toLowerCase()));
}

type AnySchema = z.core.$ZodType;

/** The object shape a schema accepts, through optional/default/prefault/nullable/pipe wrappers. */
export function objectShape(schema: AnySchema): Record<string, AnySchema> | undefined {
  let s: AnySchema | undefined = schema;
  for (let i = 0; s && i < 10; i++) {
    const def = s._zod.def as unknown as { type: string; shape?: Record<string, AnySchema>; innerType?: AnySchema; in?: AnySchema };
    if (def.type === 'object') return def.shape;
    s = def.innerType ?? def.in;
  }
  return undefined;
}

/** The schema at `path` under `root` (undefined where the path leaves the objects). */
export function schemaAt(root: AnySchema, path: ReadonlyArray<PropertyKey>): AnySchema | undefined {
  let s: AnySchema | undefined = root;
  for (const p of path) {
    const shape: Record<string, AnySchema> | undefined = s ? objectShape(s) : undefined;
    s = shape?.[String(p)];
    if (!s) return undefined;
  }
  return s;
}

export function keyPath(prefix: readonly PropertyKey[], path: readonly PropertyKey[]): string {
  return [...prefix, ...path].map((p) => (typeof p === 'number' ? `[${p}]` : String(p))).join('.').replace(/\.\[/g, '[') || '(root)';
}

/**
 * One line per issue. `root` is the schema that was parsed (for the known keys of an object
 * holding an unknown one); `prefix` the key path of that schema in the file (`storage`); `extra`
 * keys valid there although the schema does not list them (`type` of a backend section).
 */
export function describeIssues(error: z.ZodError, root: AnySchema, prefix: readonly PropertyKey[] = [], extra: readonly string[] = []): string[] {
  const lines: string[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      const shape = objectShape(schemaAt(root, issue.path) ?? root);
      const known = [...Object.keys(shape ?? {}), ...(issue.path.length === 0 ? extra : [])];
      for (const key of issue.keys) {
        const near = nearestKey(key, known);
        const parent = keyPath(prefix, issue.path);
        const full = parent === '(root)' ? key : `${parent}.${key}`;
        const nearFull = near === undefined ? undefined : parent === '(root)' ? near : `${parent}.${near}`;
        lines.push(`unknown key ${full}${nearFull ? ` — did you mean ${nearFull}?` : ` (known here: ${known.join(', ')})`}`);
      }
    } else {
      lines.push(`${keyPath(prefix, issue.path)}: ${issue.message}`);
    }
  }
  return lines;
}

/** "line L, column C" of a character offset. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const line = before.split('\n').length;
  return { line, column: before.length - before.lastIndexOf('\n') };
}

/** JSON.parse, with a failure described by line and column (V8 reports a character offset). */
export function parseJsonText(text: string): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(text) };
  } catch (err) {
    const message = (err as Error).message;
    const m = /at position (\d+)/.exec(message);
    const offset = m ? Number(m[1]) : /Unexpected end of JSON input/.test(message) ? text.length : undefined;
    const reason = message.replace(/\s*(in JSON )?at position \d+.*$/, '').replace(/^Unexpected end of JSON input$/, 'unexpected end of the file');
    if (offset === undefined) return { error: reason };
    const { line, column } = lineAndColumn(text, offset);
    return { error: `line ${line}, column ${column}: ${reason}` };
  }
}
