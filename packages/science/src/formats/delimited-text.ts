/**
 * Comma- and tab-separated tables have no signature: a text whose complete records (quoted
 * fields may hold newlines) all have the same number of fields, two or more, reads as one.
 */
import type { ContentMatch } from './content-match.js';

const MAX_RECORDS = 200;

export function matchDelimited(text: string, truncated: boolean): ContentMatch | undefined {
  for (const [delimiter, formatId, mediaType] of [['\t', 'text/tsv', 'text/tab-separated-values'], [',', 'text/csv', 'text/csv']] as const) {
    const fields = consistentFields(text, delimiter, truncated);
    if (fields !== undefined) return { formatId, exact: false, mediaType, reason: `${fields} ${delimiter === ',' ? 'comma' : 'tab'}-separated fields on every line` };
  }
  return undefined;
}

/** The field count shared by every complete record (at least two records), or undefined. */
function consistentFields(text: string, delimiter: string, truncated: boolean): number | undefined {
  let expected: number | undefined;
  let records = 0;
  let fields = 1;
  let inQuotes = false;
  let lineHasContent = false;
  for (let i = 0; i < text.length && records < MAX_RECORDS; i++) {
    const c = text[i]!;
    if (inQuotes) {
      if (c === '"') {
        if (text[i + 1] === '"') i++;
        else inQuotes = false;
      }
      continue;
    }
    if (c === '"') {
      inQuotes = true;
      lineHasContent = true;
    } else if (c === delimiter) {
      fields++;
      lineHasContent = true;
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      if (lineHasContent) {
        if (expected === undefined) expected = fields;
        else if (fields !== expected) return undefined;
        records++;
      }
      fields = 1;
      lineHasContent = false;
    } else lineHasContent = true;
  }
  // The last record counts only when the file ends there (not cut by the head).
  if (!truncated && lineHasContent && !inQuotes && records < MAX_RECORDS) {
    if (expected === undefined) expected = fields;
    else if (fields !== expected) return undefined;
    records++;
  }
  return expected !== undefined && expected >= 2 && records >= 2 ? expected : undefined;
}
