import { createHash, type Hash } from 'node:crypto';
import type { CallContext, ExtensionKit } from '@memberkit/core';
import { formatById, SystemMetadataCodec, type ObjectRecord } from '@memberkit/types';
import { fitName, safeFileName } from './file-names.js';
import type { PackageModel } from './package-model.js';
import { ZipWriter } from './zip.js';

/** Package formats this node serializes (object format ids); BagIt as zip. */
export const PACKAGE_TYPES: Record<string, { bagitVersion: string }> = {
  'application/bagit-097': { bagitVersion: '0.97' },
  'application/bagit-1.0': { bagitVersion: '1.0' },
};

type Algorithm = 'md5' | 'sha1' | 'sha256' | 'sha512';
const SYSMETA_ALGORITHMS: Record<string, Algorithm> = { MD5: 'md5', 'SHA-1': 'sha1', SHA1: 'sha1', 'SHA-256': 'sha256', SHA256: 'sha256', 'SHA-512': 'sha512', SHA512: 'sha512' };

export interface BagMember {
  pid: string;
  record: ObjectRecord;
  /** Path inside the bag, `data/...`. */
  path: string;
}

export interface WithheldMember {
  pid: string;
  reason: string;
}

export interface BagPlan {
  map: ObjectRecord;
  /** The bag's base directory: every entry of the zip is under it (BagIt 0.97 §4: a bag is serialized from its parent). */
  baseDir: string;
  members: BagMember[];
  withheld: WithheldMember[];
  bagitVersion: string;
  /**
   * Manifest algorithms: those of the members' own (system metadata) checksums, so a package
   * whose members share one algorithm needs no hashing at all; sha256 for an empty package.
   */
  algorithms: Algorithm[];
}

function payloadName(record: ObjectRecord): string {
  if (record.sysmeta.fileName) return safeFileName(record.sysmeta.fileName);
  const base = safeFileName(record.sysmeta.identifier);
  const ext = formatById(record.sysmeta.formatId)?.extension;
  return ext && !base.toLowerCase().endsWith(`.${ext}`) ? fitName(`${base}.${ext}`) : base;
}

/** The bag's base directory (and the zip's name): the map's identifier in plain ASCII. */
export function bagName(mapPid: string): string {
  const name = mapPid.replace(/[^\w.-]+/g, '_').replace(/^[._-]+/, '').slice(0, 150).replace(/[.]+$/, '');
  return name === '' ? 'bag' : name;
}

/** `path` made unique (case-insensitively) in the bag: `name (2).ext`... */
function uniquePath(taken: Set<string>, path: string): string {
  const slash = path.lastIndexOf('/');
  const dir = path.slice(0, slash + 1);
  const name = path.slice(slash + 1);
  const dot = name.lastIndexOf('.');
  const stem = dot > 0 ? name.slice(0, dot) : name;
  const ext = dot > 0 ? name.slice(dot) : '';
  let candidate = path;
  for (let i = 2; taken.has(candidate.toLowerCase()); i++) candidate = `${dir}${fitName(`${stem} (${i})${ext}`)}`;
  taken.add(candidate.toLowerCase());
  return candidate;
}

/**
 * Which members go in the bag, and where. The rule for members the caller may not read: they
 * are omitted, and listed with the reason in `withheld.txt` (and counted in bag-info.txt), so
 * a public package with one embargoed file still downloads and the bag says what is missing.
 * Members not held by this node are withheld the same way. A member named by its SID is the
 * head of that series. Where the map gives a member's `prov:atLocation`, its payload path
 * follows it (made safe: locations.ts); else the member's file name, in `data/`.
 */
export function planBag(ctx: CallContext, kit: Pick<ExtensionKit, 'access'>, model: PackageModel, bagitVersion: string): BagPlan {
  const members: BagMember[] = [];
  const withheld: WithheldMember[] = [];
  const taken = new Set<string>();
  const included = new Set<string>();
  const algorithms = new Set<Algorithm>();
  for (const m of model.members) {
    const record = m.record;
    if (!record) {
      withheld.push({ pid: m.id, reason: 'NotFound: not held by this Member Node' });
      continue;
    }
    const pid = record.sysmeta.identifier;
    if (included.has(pid)) continue;
    if (!kit.access.allows(ctx.session, record.sysmeta, 'read')) {
      withheld.push({ pid, reason: `NotAuthorized: '${ctx.session.subject}' may not read it` });
      continue;
    }
    included.add(pid);
    const alg = SYSMETA_ALGORITHMS[record.sysmeta.checksum.algorithm.toUpperCase()];
    if (alg) algorithms.add(alg);
    // The federation's R client writes locations relative to the bag (`data/raw/site1.csv`).
    const location = m.location?.replace(/^data\//, '');
    members.push({ pid, record, path: uniquePath(taken, `data/${location || payloadName(record)}`) });
  }
  return { map: model.mapRecord, baseDir: bagName(model.mapRecord.sysmeta.identifier), members, withheld, bagitVersion, algorithms: algorithms.size ? [...algorithms].sort() : ['sha256'] };
}

function digestsOf(data: Uint8Array, algorithms: readonly Algorithm[]): Record<string, string> {
  return Object.fromEntries(algorithms.map((a) => [a, createHash(a).update(data).digest('hex')]));
}

/** BagIt paths in manifests: `%`, CR and LF percent-encoded (BagIt 1.0 §2.1.3). */
function manifestPath(p: string): string {
  return p.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

function oneLine(s: string): string {
  return s.replace(/[\r\n]+/g, ' ');
}

export interface BagStreamHooks {
  /** Called as each member starts streaming (after its bytes were opened). */
  onMember?(member: BagMember): Promise<void> | void;
  /** Hash every member with its own algorithm too and fail the stream on a mismatch (costs CPU; default off). */
  verify?: boolean;
  /** Called when a member's bytes do not match its system metadata checksum (the stream then fails). */
  onCorrupt?(member: BagMember, expected: string, actual: string): void;
}

/**
 * The bag as a zip, produced as it is read: nothing is spooled; each member's bytes flow from
 * storage into the zip while their checksums are computed; manifests, bag-info and tag
 * manifests are written at the end (zip entry order does not matter to BagIt).
 */
export async function* bagZip(kit: ExtensionKit, plan: BagPlan, hooks: BagStreamHooks = {}, signal?: AbortSignal): AsyncGenerator<Buffer> {
  const zip = new ZipWriter();
  const base = `${plan.baseDir}/`;
  const tagDigests: Array<[string, Record<string, string>]> = [];
  const tagFile = function* (path: string, text: string | Uint8Array): Generator<Buffer> {
    const data = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
    tagDigests.push([path, digestsOf(data, plan.algorithms)]);
    yield* zip.file(base + path, data);
  };

  yield* tagFile('bagit.txt', `BagIt-Version: ${plan.bagitVersion}\nTag-File-Character-Encoding: UTF-8\n`);

  const payload: Array<[string, Record<string, string>]> = [];
  const withheld = [...plan.withheld];
  let payloadBytes = 0;
  let payloadFiles = 0;
  const included: BagMember[] = [];
  for (const member of plan.members) {
    if (signal?.aborted) throw signal.reason ?? new Error('aborted');
    // No abort signal for the storage stream: a stream destroyed by a signal while no one is
    // reading it would raise an unhandled error. Cancellation comes through the generator's
    // return() (the response stream was cancelled), whose finally destroys the stream.
    const content = await kit.storage.read(member.record.storageKey);
    if (!content) {
      withheld.push({ pid: member.pid, reason: 'ServiceFailure: its bytes are missing from storage' });
      continue;
    }
    content.stream.on('error', () => undefined); // errors surface through the iteration below
    try {
      await hooks.onMember?.(member);
    } catch (err) {
      content.stream.destroy();
      throw err;
    }
    // The member's own checksum is its system metadata's (verified when the node stored it);
    // other manifest algorithms, and the own one when verifying, are computed as bytes flow.
    const ownAlg = SYSMETA_ALGORITHMS[member.record.sysmeta.checksum.algorithm.toUpperCase()];
    const own = member.record.sysmeta.checksum.value.toLowerCase();
    const computed = plan.algorithms.filter((a) => a !== ownAlg || hooks.verify);
    if (hooks.verify && ownAlg && !computed.includes(ownAlg)) computed.push(ownAlg);
    const hashes = new Map<Algorithm, Hash>(computed.map((a) => [a, createHash(a)]));
    try {
      yield* zip.stream(base + member.path, content.stream as AsyncIterable<Uint8Array>, member.record.sysmeta.size, hashes.size ? (chunk) => {
        for (const h of hashes.values()) h.update(chunk);
      } : undefined);
    } finally {
      content.stream.destroy();
    }
    const digests: Record<string, string> = Object.fromEntries([...hashes].map(([a, h]) => [a, h.digest('hex')]));
    if (ownAlg && hooks.verify && digests[ownAlg] !== own) {
      hooks.onCorrupt?.(member, own, digests[ownAlg] ?? '');
      // The bytes already sent cannot be taken back: fail the download rather than deliver a bag whose manifest would lie.
      throw new Error(`the bytes of '${member.pid}' do not match its ${member.record.sysmeta.checksum.algorithm} checksum`);
    }
    if (ownAlg) digests[ownAlg] = own;
    payload.push([member.path, digests]);
    payloadBytes += member.record.sysmeta.size;
    payloadFiles++;
    included.push(member);
  }

  // Tag files: the resource map, every included object's system metadata, the pid mapping.
  const mapBytes = await (async () => {
    const content = await kit.storage.read(plan.map.storageKey);
    if (!content) return undefined;
    const chunks: Buffer[] = [];
    for await (const c of content.stream as AsyncIterable<Buffer>) chunks.push(c);
    return Buffer.concat(chunks);
  })();
  if (mapBytes) yield* tagFile('metadata/oai-ore.xml', mapBytes);
  const sysmetaTaken = new Set<string>();
  for (const r of [plan.map, ...included.map((m) => m.record)]) {
    const path = uniquePath(sysmetaTaken, `metadata/sysmeta/${fitName(`sysmeta-${safeFileName(r.sysmeta.identifier)}.xml`)}`);
    yield* tagFile(path, SystemMetadataCodec.encode(r.sysmeta, 'v2'));
  }
  const mapping = included.map((m) => `${oneLine(m.pid)} ${manifestPath(m.path)}\n`).join('');
  yield* tagFile('pid-mapping.txt', mapping);
  if (withheld.length) {
    yield* tagFile(
      'withheld.txt',
      `# Members of the resource map left out of this bag, and why (one per line: pid<TAB>reason).\n${withheld.map((w) => `${oneLine(w.pid)}\t${oneLine(w.reason)}\n`).join('')}`,
    );
  }
  for (const alg of plan.algorithms) {
    yield* tagFile(`manifest-${alg}.txt`, payload.map(([p, d]) => `${d[alg]}  ${manifestPath(p)}\n`).join(''));
  }
  const info = [
    `Bag-Software-Agent: memberkit (MNPackage.getPackage)`,
    `Bagging-Date: ${new Date().toISOString().slice(0, 10)}`,
    `External-Identifier: ${oneLine(plan.map.sysmeta.identifier)}`,
    `Payload-Oxum: ${payloadBytes}.${payloadFiles}`,
    ...(plan.map.sysmeta.authoritativeMemberNode ? [`Source-Organization: ${oneLine(plan.map.sysmeta.authoritativeMemberNode)}`] : []),
    `Internal-Sender-Description: DataONE data package aggregated by the resource map ${oneLine(plan.map.sysmeta.identifier)}; pid-mapping.txt maps identifiers to payload files; metadata/ holds the resource map and system metadata`,
    ...(withheld.length ? [`Withheld-Members: ${withheld.length} (see withheld.txt)`] : []),
  ];
  yield* tagFile('bag-info.txt', `${info.join('\n')}\n`);
  const tagManifestInputs = [...tagDigests];
  for (const alg of plan.algorithms) {
    yield* zip.file(`${base}tagmanifest-${alg}.txt`, Buffer.from(tagManifestInputs.map(([p, d]) => `${d[alg]}  ${manifestPath(p)}\n`).join(''), 'utf8'));
  }
  yield* zip.finish();
}
