import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import { startViewsNode, type ViewsNode } from './support/node.js';
import { loadDataset, PIDS } from './support/dataset.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = join(import.meta.dirname, 'artifacts');

// Skipped only off CI when no Chromium is installed; CI installs it (.ci/run) and must run it.
describe.skipIf(!existsSync(CHROMIUM) && !process.env.CI)('landing page in headless Chromium', () => {
  let node: ViewsNode;
  let browser: Browser;

  beforeAll(async () => {
    node = await startViewsNode();
    await loadDataset(node);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await node?.stop();
  });

  it('shows title, creators, abstract, coverage, citation and files; links resolve; JSON-LD agrees with the page', async () => {
    const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
    const res = await page.goto(`${node.baseUrl}/v2/views/default/${encodeURIComponent(PIDS.csv)}`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-type']).toBe('text/html; charset=utf-8');
    expect(await page.title()).toBe('Soil temperature and moisture at Toolik Field Station, Alaska, 2016–2019');
    expect(await page.locator('h1').innerText()).toBe('Soil temperature and moisture at Toolik Field Station, Alaska, 2016–2019');
    const creators = await page.locator('#creators .creator').allInnerTexts();
    expect(creators).toEqual(['Maria J. Okonkwo-Lind', 'Tomás Ibáñez', 'Toolik Field Station Environmental Data Center']);
    expect(await page.locator('#abstract').innerText()).toContain('moist acidic tussock tundra');
    const coverage = await page.locator('#coverage').innerText();
    expect(coverage).toContain('2016-06-01 to 2019-08-31');
    expect(coverage).toContain('Toolik Field Station, North Slope Borough, Alaska');
    expect(await page.locator('#coverage svg rect').count()).toBe(1);
    expect(await page.locator('#citation').innerText()).toBe(
      'Okonkwo-Lind, M. J., Ibáñez, T., Toolik Field Station Environmental Data Center (2020). Soil temperature and moisture at Toolik Field Station, Alaska, 2016–2019. NSF Arctic Data Center. https://doi.org/10.18739/A2KW57K2P',
    );

    // Files: every readable file links to a download that resolves to its bytes' size.
    const rows = page.locator('#files tbody tr');
    expect(await rows.count()).toBe(4);
    const links = await page.locator('#files a[href]').evaluateAll((as) => as.map((a) => ({ name: a.textContent ?? '', href: (a as HTMLAnchorElement).href })));
    expect(links.map((l) => l.name).sort()).toEqual(['calibration notes.pdf', 'toolik_soil_2016_2019.csv', 'toolik_soil_metadata.xml']);
    for (const l of links) {
      const r = await page.request.get(l.href);
      expect(r.status(), l.href).toBe(200);
      expect((await r.body()).length).toBeGreaterThan(0);
    }
    expect(await page.locator('#files .restricted').innerText()).toContain(PIDS.restricted);
    // Every link on the page (package, themes, ORCID excluded: external) resolves.
    const internal = await page.locator('a[href]').evaluateAll((as, base) => as.map((a) => (a as HTMLAnchorElement).href).filter((h) => h.startsWith(base as string)), new URL(node.baseUrl).origin);
    for (const href of new Set(internal)) expect((await page.request.get(href)).status(), href).toBe(200);

    // The embedded JSON-LD parses and names the same creators and files.
    const blocks = await page.locator('script[type="application/ld+json"]').allTextContents();
    expect(blocks).toHaveLength(1);
    const ld = JSON.parse(blocks[0]!) as { '@type': string; name: string; creator: { '@list': Array<{ name: string }> }; distribution: Array<{ name: string; contentUrl: string }> };
    expect(ld['@type']).toBe('Dataset');
    expect(ld.name).toBe(await page.locator('h1').innerText());
    expect(ld.creator['@list'].map((c) => c.name)).toEqual(creators);
    expect(ld.distribution.map((d) => d.name).sort()).toEqual(links.map((l) => l.name).sort());
    expect(ld.distribution.map((d) => d.contentUrl).sort()).toEqual(links.map((l) => l.href).sort());

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'landing-page.png'), fullPage: true });
    await page.close();
  });

  it('the package link downloads a zip', async () => {
    const page = await browser.newPage();
    await page.goto(`${node.baseUrl}/v2/views/default/${encodeURIComponent(PIDS.eml)}`);
    const href = await page.locator('#download-package').getAttribute('href');
    const r = await page.request.get(href!);
    expect(r.status()).toBe(200);
    expect(r.headers()['content-type']).toBe('application/zip');
    expect((await r.body()).subarray(0, 4).toString('hex')).toBe('504b0304');
    await page.close();
  });
});
