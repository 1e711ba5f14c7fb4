import { DecodeError } from './decode-error.js';

/** Identifier (PID or SID) rules: non-empty, no whitespace, at most 800 characters (d1:NonEmptyNoWhitespaceString800). */
export const IDENTIFIER_MAX_LENGTH = 800;

// XML 1.0 cannot carry these code points, so an identifier holding one could never be
// written into a DataONE document.
// eslint-disable-next-line no-control-regex
const NOT_XML_CHAR = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/u;
const WHITESPACE = /\s/u;

/** Why an identifier is not acceptable, or undefined when it is. */
export function identifierProblem(id: string): string | undefined {
  if (id.length === 0) return 'an identifier must not be empty';
  if ([...id].length > IDENTIFIER_MAX_LENGTH) return `an identifier must be at most ${IDENTIFIER_MAX_LENGTH} characters`;
  if (WHITESPACE.test(id)) return 'an identifier must not contain whitespace';
  if (NOT_XML_CHAR.test(id)) return 'an identifier must not contain control characters';
  return undefined;
}

export function isValidIdentifier(id: string): boolean {
  return identifierProblem(id) === undefined;
}

/** @throws DecodeError naming the field when `id` breaks the identifier rules. */
export function assertIdentifier(id: string, field = 'identifier'): string {
  const problem = identifierProblem(id);
  if (problem) throw new DecodeError(`${problem} (got '${id.length > 60 ? id.slice(0, 60) + '…' : id}')`, field);
  return id;
}
