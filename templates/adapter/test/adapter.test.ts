// Cases specific to this adapter, beside the shared suites: the boundaries every adapter
// keeps, and behaviour of this backend the suites cannot know about.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildObjectRecord, expectAdapterError } from '@memberkit/testkit';
import { createTemplateCatalogue, createTemplateStorage } from '../src/index.js';

const SRC = join(import.meta.dirname, '..', 'src');

describe('adapter-template boundaries', () => {
  it('imports neither @memberkit/core, Hono nor inversify', async () => {
    for (const file of await readdir(SRC, { recursive: true })) {
      if (!file.endsWith('.ts')) continue;
      const text = await readFile(join(SRC, file), 'utf8');
      expect(text, file).not.toMatch(/from\s+['"](@memberkit\/core|hono|@hono\/[^'"]+|inversify)['"]/);
    }
  });

  it('refuses calls before open with unavailable', async () => {
    await expectAdapterError(() => createTemplateStorage().stat('objects/x'), 'unavailable', 'stat before open');
    await expectAdapterError(() => createTemplateCatalogue().get('x'), 'unavailable', 'get before open');
  });

  it('opens with initial records', async () => {
    const record = buildObjectRecord('fixture-1', { sysmeta: { seriesId: 'fixture-series' } });
    const catalogue = createTemplateCatalogue({ initial: [record] });
    await catalogue.open();
    expect(await catalogue.get('fixture-1')).toEqual(record);
    expect(await catalogue.identifierUse('fixture-series')).toBe('sid');
  });

  it('hands out copies: changing a returned record changes nothing stored', async () => {
    const catalogue = createTemplateCatalogue();
    await catalogue.open();
    await catalogue.apply({ insert: [buildObjectRecord('copy-1')] });
    const got = await catalogue.get('copy-1');
    got!.sysmeta.formatId = 'changed/by-caller';
    expect((await catalogue.get('copy-1'))?.sysmeta.formatId).not.toBe('changed/by-caller');
  });
});
