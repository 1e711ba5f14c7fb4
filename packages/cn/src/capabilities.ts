import type { Node, Service } from '@memberkit/types';
import type { CnConfig } from './config.js';

/** The CN's APIs and the versions it serves them in ("CNView (v2.0)", "CNDiagnostic (v2.0)"). */
const SERVICES: ReadonlyArray<{ name: string; versions: readonly string[] }> = [
  { name: 'CNCore', versions: ['v1', 'v2'] },
  { name: 'CNRead', versions: ['v1', 'v2'] },
  { name: 'CNAuthorization', versions: ['v1', 'v2'] },
  { name: 'CNIdentity', versions: ['v1', 'v2'] },
  { name: 'CNRegister', versions: ['v1', 'v2'] },
  { name: 'CNDiagnostic', versions: ['v2'] },
  { name: 'CNView', versions: ['v2'] },
];

/**
 * getCapabilities: the CN's own Node document, type cn. "A service element may carry
 * restriction children naming a methodName and the subjects allowed": verifyAccount and
 * mapIdentity are restricted to the administrators and the configured verifiers / mappers.
 */
export function coordinatingNodeDocument(config: CnConfig): Node {
  const n = config.node;
  const admins = config.access.administrators;
  const unique = (xs: readonly string[]) => [...new Set(xs)];
  const restrictions = {
    CNIdentity: [
      { methodName: 'verifyAccount', subject: unique([...admins, ...config.cn.identity.verifiers]) },
      { methodName: 'mapIdentity', subject: unique([...admins, ...config.cn.identity.mappers]) },
    ].filter((r) => r.subject.length > 0),
  } as Record<string, Service['restriction']>;
  return {
    replicate: false,
    synchronize: false,
    type: 'cn',
    state: 'up',
    identifier: n.identifier,
    name: n.name,
    description: n.description,
    baseURL: n.baseURL,
    services: {
      service: SERVICES.flatMap((s) => s.versions.map((version) => ({ name: s.name, version, available: true, restriction: restrictions[s.name] ?? [] }))),
    },
    ping: { success: true },
    subject: [n.subject],
    contactSubject: n.contactSubject,
    property: Object.entries(n.properties ?? {}).map(([key, value]) => ({ key, value })),
  };
}
