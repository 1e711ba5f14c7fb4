/**
 * Path globs for format overrides: `**` any number of folders, `*` and `?` within one name,
 * `[abc]` a character class, `{a,b}` alternatives. A pattern without `/` matches the file
 * name at any depth (`*.eml.xml`); one with `/` matches the whole relative path (`data/**`).
 */

export interface CompiledGlob {
  pattern: string;
  test(relativePath: string): boolean;
}

/** True when `key` is a glob (or a path), not a bare extension. */
export function isGlob(key: string): boolean {
  return /[*?[{/]/.test(key);
}

/** Compiles `pattern`, or throws an Error saying what is wrong with it. */
export function compileGlob(pattern: string): CompiledGlob {
  const p = pattern.replace(/^\.\//, '').replace(/^\//, '');
  if (p === '') throw new Error('empty pattern');
  const anchoredToPath = p.includes('/');
  let re = '';
  let braces = 0;
  for (let i = 0; i < p.length; i++) {
    const c = p[i]!;
    if (c === '*') {
      if (p[i + 1] === '*') {
        const slashAfter = p[i + 2] === '/';
        const atSegmentStart = i === 0 || p[i - 1] === '/';
        if (atSegmentStart && (slashAfter || i + 2 === p.length)) {
          // `**/` zero or more folders; a trailing `**` everything below.
          re += slashAfter ? '(?:[^/]*/)*' : '.*';
          i += slashAfter ? 2 : 1;
          continue;
        }
        i++;
      }
      re += '[^/]*';
    } else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const end = p.indexOf(']', i + 2);
      if (end < 0) throw new Error(`unclosed [ in ${pattern}`);
      let body = p.slice(i + 1, end);
      if (body.startsWith('!')) body = `^${body.slice(1)}`;
      re += `[${body.replace(/\\/g, '\\\\')}]`;
      i = end;
    } else if (c === '{') {
      braces++;
      re += '(?:';
    } else if (c === '}' && braces > 0) {
      braces--;
      re += ')';
    } else if (c === ',' && braces > 0) re += '|';
    else re += c.replace(/[.+^$()|\\\]{}]/g, '\\$&');
  }
  if (braces > 0) throw new Error(`unclosed { in ${pattern}`);
  let regex: RegExp;
  try {
    regex = new RegExp(`^${re}$`, 'u');
  } catch (e) {
    throw new Error(`not a valid pattern: ${(e as Error).message}`);
  }
  return {
    pattern,
    test: (relativePath) => {
      const path = relativePath.replace(/\\/g, '/').replace(/^\/+/, '');
      return regex.test(anchoredToPath ? path : path.slice(path.lastIndexOf('/') + 1));
    },
  };
}
