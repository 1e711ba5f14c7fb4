import { BlockList, isIP } from 'node:net';
import type { Node, Schedule } from '@memberkit/types';

/**
 * The checks CNRegister applies to a submitted Node document, as pure functions: each
 * returns a sentence saying what to fix, or undefined when the document passes.
 */

/** The production CN's rule for node identifiers. */
export const NODE_IDENTIFIER_RULE = /^urn:node:\w{2,16}$/;

export function nodeIdentifierProblem(id: string): string | undefined {
  return NODE_IDENTIFIER_RULE.test(id) ? undefined : `the node identifier '${id}' does not match ${NODE_IDENTIFIER_RULE.source} (urn:node: then 2 to 16 letters, digits or _), e.g. urn:node:MYREPO`;
}

/**
 * The form of a baseURL two entries are compared in (the UNIQUE column): scheme and host
 * lower case, the scheme's default port dropped, trailing slashes dropped, no query or
 * fragment. Undefined when the text is not an http(s) URL.
 */
export function normaliseBaseUrl(baseURL: string): string | undefined {
  let url: URL;
  try {
    url = new URL(baseURL.trim());
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') return undefined;
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.protocol}//${url.host}${path}`; // URL already lower-cases the host and drops a default port
}

export function baseUrlProblem(baseURL: string): string | undefined {
  if (normaliseBaseUrl(baseURL) === undefined) return `the baseURL '${baseURL}' is not an http or https URL without credentials, query or fragment (e.g. https://data.example.org/mn)`;
  return undefined;
}

/** Addresses a node of a public federation never has: loopback, private, link-local, unspecified. */
const LOCAL_ADDRESSES = (() => {
  const list = new BlockList();
  for (const [net, prefix] of [['127.0.0.0', 8], ['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16], ['169.254.0.0', 16], ['100.64.0.0', 10], ['0.0.0.0', 8]] as const) list.addSubnet(net, prefix, 'ipv4');
  for (const [net, prefix] of [['::1', 128], ['::', 128], ['fc00::', 7], ['fe80::', 10]] as const) list.addSubnet(net, prefix, 'ipv6');
  return list;
})();

/**
 * Whether the baseURL names this machine or a private network: `localhost` (and
 * `*.localhost`), a loopback, private, link-local or unspecified IP literal (IPv4-mapped IPv6
 * included). Names are not resolved: a public name pointing at a private address passes.
 */
export function isLocalBaseUrl(baseURL: string): boolean {
  let host: string;
  try {
    host = new URL(baseURL).hostname.toLowerCase();
  } catch {
    return false;
  }
  host = host.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(host)?.[1];
  const address = mapped ?? host;
  const family = isIP(address);
  if (family === 0) return false;
  return LOCAL_ADDRESSES.check(address, family === 6 ? 'ipv6' : 'ipv4');
}

/** One Quartz cron field: its bounds and the names and special characters it accepts. */
interface CronField {
  name: keyof Schedule;
  min: number;
  max: number;
  names?: readonly string[];
  /** Characters allowed beside digits, names, `*`, `,`, `-`, `/`. */
  special?: RegExp;
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'] as const;
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'] as const;

const FIELDS: readonly CronField[] = [
  { name: 'sec', min: 0, max: 59 },
  { name: 'min', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'mday', min: 1, max: 31, special: /^(\?|L(-([1-9]|[12]\d|30))?|LW|([1-9]|[12]\d|3[01])W)$/ },
  { name: 'mon', min: 1, max: 12, names: MONTHS },
  { name: 'wday', min: 1, max: 7, names: DAYS, special: /^(\?|L|([1-7]|SUN|MON|TUE|WED|THU|FRI|SAT)(L|#[1-5]))$/ },
  { name: 'year', min: 1970, max: 2099 },
];

function cronValue(field: CronField, text: string): number | undefined {
  if (/^\d+$/.test(text)) {
    const n = Number(text);
    return n >= field.min && n <= field.max ? n : undefined;
  }
  const i = field.names?.indexOf(text.toUpperCase() as never) ?? -1;
  return i >= 0 ? i + field.min : undefined;
}

/** A Quartz field: `*`, values, ranges `a-b`, steps `x/n`, lists, and the field's specials. */
function cronFieldProblem(field: CronField, raw: string): string | undefined {
  const text = raw.trim();
  const bad = `schedule ${field.name}="${raw}" is not a Quartz cron field (${field.min}-${field.max}${field.names ? ` or ${field.names[0]}-${field.names.at(-1)}` : ''}, *, a-b, x/n, lists)`;
  if (text === '') return bad;
  if (field.special?.test(text.toUpperCase())) return undefined;
  for (const item of text.split(',')) {
    const [range, step, extra] = item.split('/');
    if (extra !== undefined || range === undefined || range === '') return bad;
    if (step !== undefined && !(/^\d+$/.test(step) && Number(step) > 0 && Number(step) <= field.max - field.min + 1)) return bad;
    if (range === '*') continue;
    const [from, to, more] = range.split('-');
    if (more !== undefined || cronValue(field, from!) === undefined) return bad;
    if (to !== undefined && cronValue(field, to) === undefined) return bad;
  }
  return undefined;
}

/**
 * "Syntax for each time slot follows the syntax conventions defined by the Quartz Scheduler."
 * Each field is checked against its Quartz bounds; seconds must be one number (the schema
 * refuses wildcards there: a harvest every second is impractical); and, as Quartz requires,
 * exactly one of mday and wday is `?`.
 */
export function scheduleProblem(schedule: Schedule | undefined): string | undefined {
  if (schedule === undefined) return 'a node with synchronize="true" needs a synchronization schedule (<synchronization><schedule sec="0" min="0/3" .../>)';
  if (!/^[0-5]?\d$/.test(schedule.sec.trim())) return `schedule sec="${schedule.sec}" must be one second of the minute (0-59)`;
  for (const field of FIELDS) {
    const problem = cronFieldProblem(field, schedule[field.name]);
    if (problem) return problem;
  }
  const mdayAny = schedule.mday.trim() === '?';
  const wdayAny = schedule.wday.trim() === '?';
  if (mdayAny === wdayAny) return `schedule mday="${schedule.mday}" wday="${schedule.wday}": exactly one of mday and wday must be "?" (Quartz rule)`;
  return undefined;
}

/** What the register and update checks need besides the document. */
export interface RegistrationPolicy {
  /** cn.registration.allowLoopback */
  allowLoopback: boolean;
}

/** Every problem of a submitted Node document, in the order a person fixes them. */
export function nodeDocumentProblem(node: Node, policy: RegistrationPolicy): string | undefined {
  const id = nodeIdentifierProblem(node.identifier);
  if (id) return id;
  const url = baseUrlProblem(node.baseURL);
  if (url) return url;
  if (!policy.allowLoopback && isLocalBaseUrl(node.baseURL)) {
    return `the baseURL '${node.baseURL}' is a loopback or private address, which other nodes of the federation cannot reach (a CN for a local federation accepts it with cn.registration.allowLoopback: true)`;
  }
  if (node.subject.length === 0) return 'the node document names no subject (<subject>): the subject of the node\'s certificate or token';
  if (node.contactSubject.length === 0) return 'the node document names no contact subject (<contactSubject>): a person with a verified account on this CN';
  if (node.synchronize) {
    const schedule = scheduleProblem(node.synchronization?.schedule);
    if (schedule) return schedule;
  }
  return undefined;
}
