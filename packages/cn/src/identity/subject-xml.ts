import { DecodeError, parseXml, TYPES_NS_V1 } from '@memberkit/types';

function escapeText(value: string): string {
  return value.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/**
 * A Types.Subject answer (registerAccount, updateAccount, createGroup):
 * `<d1:subject xmlns:d1="http://ns.dataone.org/service/types/v1">CN=...</d1:subject>`, the v1
 * namespace on both API versions (Subject is a v1 type), no whitespace around the value.
 */
export function encodeSubject(subject: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?><d1:subject xmlns:d1="${TYPES_NS_V1}">${escapeText(subject)}</d1:subject>`;
}

/**
 * A subject sent as a form part: the plain subject (what the production CN reads), or a
 * Types.Subject document (what the federation's Python client sends: `subject.toxml()`).
 * Throws DecodeError when the part is XML but not a subject document.
 */
export function subjectFromPart(part: string): string {
  const text = part.replace(/^\uFEFF/, '').trim();
  if (!text.startsWith('<')) return text;
  const doc = parseXml(text);
  if (doc.rootName !== 'subject') throw new DecodeError(`expected a <subject> document, found <${doc.rootName}>`);
  const value = doc.root['#text'];
  return typeof value === 'string' ? value.trim() : '';
}
