// A Dockerfile read the way BuildKit reads it, for tests that check templates/node/Dockerfile
// without a Docker engine: parser directives, line continuations, comments, stages, and each
// instruction's flags and arguments (exec form or shell form), with the WORKDIR in force.
import { posix } from 'node:path';

export interface Instruction {
  keyword: string;
  /** `--from=build` → { from: 'build' } (COPY, ADD, HEALTHCHECK options). */
  flags: Record<string, string>;
  /** Exec form (a JSON array) or shell form split on whitespace; HEALTHCHECK: after `CMD`. */
  args: string[];
  /** The text after the keyword (and its flags), continuation lines joined. */
  text: string;
  /** True when the arguments were a JSON array (exec form). */
  exec: boolean;
  /** WORKDIR in force when the instruction runs. */
  workdir: string;
  line: number;
}

export interface Stage {
  image: string;
  name?: string;
  instructions: Instruction[];
}

export interface Dockerfile {
  directives: Record<string, string>;
  stages: Stage[];
}

export function parseDockerfile(text: string): Dockerfile {
  const lines = text.split('\n');
  const directives: Record<string, string> = {};
  let i = 0;
  // Parser directives: `# key=value` lines before anything else.
  for (; i < lines.length; i++) {
    const m = /^#\s*(\w+)\s*=\s*(\S+)\s*$/.exec(lines[i]!);
    if (!m) break;
    directives[m[1]!.toLowerCase()] = m[2]!;
  }
  const stages: Stage[] = [];
  while (i < lines.length) {
    let start = i;
    let logical = '';
    // A logical line: physical lines ending in `\`; comment lines inside it are dropped.
    for (; i < lines.length; i++) {
      const raw = lines[i]!;
      if (/^\s*#/.test(raw)) continue;
      if (logical === '') start = i;
      if (/\\\s*$/.test(raw)) {
        logical += raw.replace(/\\\s*$/, ' ');
        continue;
      }
      logical += raw;
      i++;
      break;
    }
    const m = /^\s*(\w+)\s+([\s\S]*?)\s*$/.exec(logical);
    if (!m) continue;
    const keyword = m[1]!.toUpperCase();
    let rest = m[2]!.replace(/\s+/g, ' ');
    const flags: Record<string, string> = {};
    for (let f = /^--([\w-]+)(?:=(\S*))?\s*/.exec(rest); f; f = /^--([\w-]+)(?:=(\S*))?\s*/.exec(rest)) {
      flags[f[1]!] = f[2] ?? 'true';
      rest = rest.slice(f[0].length);
    }
    if (keyword === 'HEALTHCHECK') rest = rest.replace(/^CMD\s+/i, '');
    let args: string[];
    let exec = false;
    if (rest.startsWith('[')) {
      args = JSON.parse(rest) as string[];
      exec = true;
    } else {
      args = rest.split(' ').filter((a) => a !== '');
    }
    if (keyword === 'FROM') {
      const as = args.findIndex((a) => a.toUpperCase() === 'AS');
      stages.push({ image: args[0]!, ...(as > 0 ? { name: args[as + 1] } : {}), instructions: [] });
      continue;
    }
    const stage = stages.at(-1);
    if (!stage) throw new Error(`line ${start + 1}: ${keyword} before any FROM`);
    const previous = stage.instructions.at(-1);
    let workdir = previous ? previous.workdir : '/';
    if (keyword === 'WORKDIR') workdir = posix.resolve(workdir, args[0]!);
    stage.instructions.push({ keyword, flags, args, text: rest, exec, workdir, line: start + 1 });
  }
  return { directives, stages };
}

/** The instructions of a stage with this keyword. */
export function instructions(stage: Stage, keyword: string): Instruction[] {
  return stage.instructions.filter((ins) => ins.keyword === keyword);
}

/** COPY's sources and destination, the destination made absolute against the WORKDIR. */
export function copyPaths(ins: Instruction): { sources: string[]; dest: string } {
  const dest = ins.args.at(-1)!;
  return { sources: ins.args.slice(0, -1), dest: posix.resolve(ins.workdir, dest) };
}

/** The commands of a shell-form RUN (`a && b && c`), each as words. */
export function runCommands(ins: Instruction): string[][] {
  return ins.text.split(/\s*(?:&&|;)\s*/).map((c) => c.trim().split(' ').filter((w) => w !== '')).filter((c) => c.length > 0);
}

/** ENV's `KEY=value` pairs (values in double quotes may hold spaces). */
export function envPairs(ins: Instruction): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of ins.text.matchAll(/(\w+)=(?:"((?:[^"\\]|\\.)*)"|(\S*))/g)) out[m[1]!] = m[2] ?? m[3] ?? '';
  return out;
}

/** Where an image path came from: the last COPY whose destination holds it (else undefined). */
export function copiedFrom(stage: Stage, imagePath: string): { ins: Instruction; source: string; rest: string } | undefined {
  for (const ins of instructions(stage, 'COPY').reverse()) {
    const { sources, dest } = copyPaths(ins);
    for (const source of sources) {
      // `COPY a b ./` copies each file into the folder; `COPY dir /x` copies dir's content to /x.
      const target = sources.length > 1 || ins.args.at(-1)!.endsWith('/') ? posix.join(dest, posix.basename(source)) : dest;
      if (imagePath === target) return { ins, source, rest: '' };
      if (imagePath.startsWith(target + '/')) return { ins, source, rest: imagePath.slice(target.length + 1) };
    }
  }
  return undefined;
}
