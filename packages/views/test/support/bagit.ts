import { createHash } from 'node:crypto';
import type { ZipEntry } from './unzip.js';

/**
 * A serialized bag's base directory (BagIt 0.97 §4: one folder at the top of the zip holding
 * bagit.txt, the manifests and data/) and its entries relative to it. Throws when entries lie
 * outside one base directory.
 */
export function bagRoot(entries: Map<string, ZipEntry>): { base: string; entries: Map<string, ZipEntry> } {
  const tops = new Set([...entries.keys()].map((n) => n.split('/')[0]!));
  const base = [...tops][0];
  if (tops.size !== 1 || !base || [...entries.keys()].some((n) => !n.includes('/'))) throw new Error(`not one base directory: ${[...tops].join(', ')}`);
  return { base, entries: new Map([...entries].map(([n, e]) => [n.slice(base.length + 1), e])) };
}

/**
 * Validate a BagIt bag (0.97 / 1.0) held in zip entries: bagit.txt declaration, payload under
 * data/, every manifest lists every payload file with a matching digest and nothing else,
 * tag manifests match, Payload-Oxum agrees. Returns the problems (empty when valid).
 */
export function validateBag(entries: Map<string, ZipEntry>): string[] {
  const problems: string[] = [];
  const text = (n: string): string | undefined => entries.get(n)?.data.toString('utf8');
  const bagit = text('bagit.txt');
  if (!bagit || !/^BagIt-Version: (0\.97|1\.0)\nTag-File-Character-Encoding: UTF-8\n$/.test(bagit)) problems.push(`bagit.txt invalid: ${JSON.stringify(bagit)}`);
  const payload = [...entries.keys()].filter((n) => n.startsWith('data/'));
  const manifests = [...entries.keys()].filter((n) => /^manifest-(md5|sha1|sha256|sha512)\.txt$/.test(n));
  if (!manifests.length) problems.push('no payload manifest');
  const parse = (body: string): Map<string, string> => {
    const m = new Map<string, string>();
    for (const line of body.split('\n').filter(Boolean)) {
      const match = /^([0-9a-f]+) {1,2}(.+)$/.exec(line);
      if (!match) problems.push(`bad manifest line ${JSON.stringify(line)}`);
      else m.set(decodeURIComponent(match[2]!.replace(/%(?!0D|0A|25)/gi, '%25')), match[1]!);
    }
    return m;
  };
  for (const manifest of manifests) {
    const alg = /^manifest-(\w+)\.txt$/.exec(manifest)![1]!;
    const lines = parse(text(manifest)!);
    for (const p of payload) {
      const digest = createHash(alg).update(entries.get(p)!.data).digest('hex');
      if (!lines.has(p)) problems.push(`${manifest} does not list ${p}`);
      else if (lines.get(p) !== digest) problems.push(`${manifest}: ${p} digest mismatch`);
    }
    for (const listed of lines.keys()) if (!entries.has(listed)) problems.push(`${manifest} lists missing ${listed}`);
  }
  for (const tm of [...entries.keys()].filter((n) => /^tagmanifest-\w+\.txt$/.test(n))) {
    const alg = /^tagmanifest-(\w+)\.txt$/.exec(tm)![1]!;
    for (const [p, digest] of parse(text(tm)!)) {
      const e = entries.get(p);
      if (!e) problems.push(`${tm} lists missing ${p}`);
      else if (p.startsWith('data/')) problems.push(`${tm} lists payload ${p}`);
      else if (createHash(alg).update(e.data).digest('hex') !== digest) problems.push(`${tm}: ${p} digest mismatch`);
    }
  }
  const info = text('bag-info.txt') ?? '';
  const oxum = /^Payload-Oxum: (\d+)\.(\d+)$/m.exec(info);
  if (!oxum) problems.push('bag-info.txt has no Payload-Oxum');
  else {
    const bytes = payload.reduce((n, p) => n + entries.get(p)!.data.length, 0);
    if (Number(oxum[1]) !== bytes || Number(oxum[2]) !== payload.length) problems.push(`Payload-Oxum ${oxum[1]}.${oxum[2]} != ${bytes}.${payload.length}`);
  }
  for (const n of entries.keys()) if (!n.startsWith('data/') && n.includes('/') && !n.startsWith('metadata/')) problems.push(`unexpected tag directory ${n}`);
  return problems;
}
