import { describe, expect, it } from 'vitest';
import { checkNodeIdentifier, defaultNodeIdentifier } from '../src/generator/node.js';
import { NODE_IDENTIFIER_RULE } from '../src/config-schema.js';

// `memberkit new node` writes identifiers a node later registers with: they must pass the
// production CN's rule (^urn:node:\w{2,16}$), the one serve warns about and register enforces.
describe('generated node identifiers follow the Coordinating Node rule', () => {
  it('derives a valid default from any folder name', () => {
    for (const dir of ['/srv/my-long-archive-folder-name', '/tmp/a', '/x/ü-ß', '/data/ok_name', '/x/--']) {
      expect(defaultNodeIdentifier(dir), dir).toMatch(NODE_IDENTIFIER_RULE);
    }
    expect(defaultNodeIdentifier('/srv/my-archive')).toBe('urn:node:MY_ARCHIVE');
  });

  it('refuses identifiers the CN would refuse, naming the rule', () => {
    expect(checkNodeIdentifier('urn:node:MYREPO')).toBeUndefined();
    for (const bad of ['urn:node:memberkit-local', 'urn:node:A', 'urn:node:ABCDEFGHIJKLMNOPQ', 'MYREPO']) {
      expect(checkNodeIdentifier(bad), bad).toMatch(/urn:node:\\w\{2,16\}/);
    }
  });
});
