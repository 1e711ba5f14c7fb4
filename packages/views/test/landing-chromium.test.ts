import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import { startViewsNode, type ViewsNode } from './support/node.js';
import { loadDataset, PIDS } from './support/dataset.js';
import { KELP, KELP_TITLE, loadKelpDataset } from './support/kelp.js';
import { createPackagesExtension, createViewsExtension } from '../src/index.js';

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
    expect(coverage).toContain('1 June 2016 to 31 August 2019');
    expect(await page.locator('#coverage time').evaluateAll((ts) => ts.map((t) => t.getAttribute('datetime')))).toEqual(['2016-06-01', '2019-08-31']);
    expect(coverage).toContain('Toolik Field Station, North Slope Borough, Alaska');
    // A field site is a marker on the map (its box is a few hundred metres across).
    expect(await page.locator('#coverage svg .point').count()).toBe(1);
    expect(await page.locator('#coverage svg path.land').getAttribute('d')).toMatch(/^M/);
    expect(await page.locator('#node-name').innerText()).toBe('memberkit views test node');
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

    expect(await page.locator('#citation-link').getAttribute('href')).toBe('https://doi.org/10.18739/A2KW57K2P');
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

// An EML dataset without a DOI, with entity descriptions and attribute lists, at phone and desktop widths.
describe.skipIf(!existsSync(CHROMIUM) && !process.env.CI)('landing page of an EML dataset at phone and desktop widths', () => {
  let node: ViewsNode;
  let browser: Browser;

  beforeAll(async () => {
    node = await startViewsNode();
    await loadKelpDataset(node);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await node?.stop();
  });

  for (const width of [375, 1280]) {
    it(`${width} px: no horizontal overflow, map visible, title, persons, citation with a link that resolves, files described; nothing runs or loads`, async () => {
      const page = await browser.newPage({ viewport: { width, height: 800 }, javaScriptEnabled: true });
      const requests: string[] = [];
      const problems: string[] = [];
      page.on('request', (r) => requests.push(r.url()));
      page.on('console', (m) => problems.push(m.text()));
      page.on('pageerror', (e) => problems.push(e.message));
      const url = `${node.baseUrl}/v2/views/default/${encodeURIComponent(KELP.canopy)}`;
      const res = await page.goto(url);
      expect(res?.status()).toBe(200);
      // Offline: the page loads nothing (no tiles, fonts, images or scripts), and no CSP violation is reported.
      expect(requests).toEqual([url]);
      expect(problems).toEqual([]);
      expect(await page.locator('script').evaluateAll((ss) => ss.map((s) => s.getAttribute('type')))).toEqual(['application/ld+json']);

      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      expect(await page.locator('#node-name').innerText()).toBe('memberkit views test node');
      expect(await page.locator('h1').innerText()).toBe(KELP_TITLE);
      expect(await page.locator('#creators .creator').allInnerTexts()).toEqual(['Ana Lucía Ferreira', 'Daniel Whitcombe', 'Keiko Tanabe']);

      // The map: on screen, within the page's width, the box and the point drawn over land.
      const map = page.locator('#coverage-map');
      await map.scrollIntoViewIfNeeded();
      const box = (await map.boundingBox())!;
      expect(box.width).toBeGreaterThan(250);
      expect(box.height).toBeGreaterThan(box.width / 2 - 2);
      expect(box.x + box.width).toBeLessThanOrEqual(width);
      expect(await map.locator('rect.box').count()).toBe(1);
      expect(await map.locator('.point').count()).toBe(1);
      expect((await map.locator('path.land').getAttribute('d'))!.length).toBeGreaterThan(500);
      expect(await map.locator('title').first().textContent()).toContain('Santa Barbara Channel');

      // Human dates with machine-readable values.
      expect(await page.locator('#published').innerText()).toBe('Published 12 March 2024');
      expect(await page.locator('#published time').getAttribute('datetime')).toBe('2024-03-12');
      expect(await page.locator('#coverage').innerText()).toContain('7 January 2019 to 18 December 2023');
      expect(await page.locator('#uploaded time').getAttribute('datetime')).toMatch(/^\d{4}-\d{2}-\d{2}T/);
      expect(await page.locator('#uploaded').innerText()).toMatch(/^\d{1,2} [A-Z][a-z]+ \d{4}$/);

      // No DOI: the citation ends with the node's resolve URL of the EML, which serves it.
      const emlUrl = `${node.baseUrl}/v2/object/${encodeURIComponent(KELP.eml)}`;
      expect(await page.locator('#citation').innerText()).toBe(`Ferreira, A. L., Whitcombe, D., Tanabe, K. (2024). ${KELP_TITLE}. Santa Barbara Coastal Reef Observatory. ${emlUrl}`);
      const link = await page.locator('#citation-link').getAttribute('href');
      expect(link).toBe(emlUrl);
      const cited = await page.request.get(link!);
      expect(cited.status()).toBe(200);
      expect(await cited.text()).toContain(KELP_TITLE);

      // Download all files: plain words, the BagIt detail in the tooltip, and it is a zip.
      const download = page.locator('#download-package');
      expect(await download.innerText()).toMatch(/^Download all files \(zip\)\s+4 files, \d+ KiB$/);
      expect(await download.getAttribute('title')).toMatch(/BagIt/);
      const zip = await page.request.get((await download.getAttribute('href'))!);
      expect((await zip.body()).subarray(0, 4).toString('hex')).toBe('504b0304');

      // Files with their descriptions and variables from the EML (matched by resolve URL and by objectName).
      const rows = page.locator('#files tbody tr');
      expect(await rows.count()).toBe(4);
      const canopy = rows.filter({ hasText: 'kelp_canopy_biomass_2019_2023.csv' });
      expect(await canopy.locator('td.description').innerText()).toContain('Giant kelp canopy biomass and frond density per transect');
      expect(await canopy.locator('details summary').innerText()).toBe('5 variables');
      await canopy.locator('details summary').click();
      expect(await canopy.locator('details li').nth(4).innerText()).toBe('canopy_biomass — Wet canopy biomass estimated from frond counts [kilogramsPerSquareMeter]');
      const temperature = rows.filter({ hasText: 'bottom_temperature_hourly.csv' });
      expect(await temperature.locator('td.description').innerText()).toContain('Hourly bottom water temperature at 8 m depth');
      expect(await rows.filter({ hasText: 'survey_protocol_v3.2.pdf' }).locator('td.description').innerText()).toContain('Diver survey protocol');
      expect(await page.locator('#other-entities').innerText()).toContain('Reef site photographs');

      // The JSON-LD agrees: descriptions of the distribution, the citation.
      const ld = JSON.parse((await page.locator('script[type="application/ld+json"]').textContent())!) as { citation: string; distribution: Array<{ name: string; description?: string }> };
      expect(ld.citation).toBe(await page.locator('#citation').innerText());
      expect(ld.distribution.find((d) => d.name === 'bottom_temperature_hourly.csv')?.description).toMatch(/^Hourly bottom water temperature/);

      await page.close();
    });
  }

  // The README's screenshot (docs/landing-page.png is copied from test/artifacts): the dataset's
  // page on a node with a public base URL and a name, one variable list open.
  it('desktop screenshot of the dataset page', async () => {
    const named = await startViewsNode([createViewsExtension({ baseURL: 'https://data.reefobservatory.example.org/mn' }), createPackagesExtension()], 'Santa Barbara Coastal Reef Observatory');
    try {
      await loadKelpDataset(named);
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await page.goto(`${named.baseUrl}/v2/views/default/${encodeURIComponent(KELP.eml)}`);
      expect(await page.locator('#node-name').innerText()).toBe('Santa Barbara Coastal Reef Observatory');
      expect(await page.locator('#citation-link').getAttribute('href')).toBe(`https://data.reefobservatory.example.org/mn/v2/object/${encodeURIComponent(KELP.eml)}`);
      await page.locator('#files details summary').first().click();
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'landing-page.png'), fullPage: true });
      await page.close();
    } finally {
      await named.stop();
    }
  });
});

describe('citation link of a node registered with the federation', () => {
  it('synchronised: the federation resolve URL', async () => {
    const node = await startViewsNode([createViewsExtension({ federation: 'https://cn.dataone.org/cn' }), createPackagesExtension()]);
    try {
      await loadKelpDataset(node);
      const html = await (await fetch(`${node.baseUrl}/v2/views/default/${encodeURIComponent(KELP.eml)}`)).text();
      expect(html).toContain(`<a href="https://cn.dataone.org/cn/v2/resolve/${encodeURIComponent(KELP.eml)}" id="citation-link">`);
    } finally {
      await node.stop();
    }
  });
});
