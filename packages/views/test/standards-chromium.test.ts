/**
 * Issue #18: the landing page of a document of every standard the federation holds (the
 * science package's fixtures, fixtures/standards/) shows, in headless Chromium, the document's
 * title, the persons and organisations it names, and a citation that matches it: first
 * author's family name, the year, the title, ending with a link that resolves (the DOI as
 * https://doi.org/..., else the node's URL of the document). The expectations below are read
 * off the documents themselves, not off the readers, so a reader or page gap shows here.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import { MemberNodeClient } from '@memberkit/client';
import { identifyFormat } from '@memberkit/science';
import { startViewsNode, sysmeta, type ViewsNode } from './support/node.js';
import { startNodeProcess, writeConfig, type NodeProcess } from '../../../test/support/node-process.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const FIXTURES = new URL('../../science/test/fixtures/standards/', import.meta.url);

interface Standard {
  file: string;
  title: string;
  /** Creators as the page names them, in the document's order. */
  creators: string[];
  /** The first creator's family name, which the citation starts with. */
  family: string;
  year: string;
  /** The DOI the document gives, if any: the citation ends with it; else with the node's object URL. */
  doi?: string;
}

const STANDARDS: Standard[] = [
  { file: 'eml-2.0.1-references.xml', title: 'Lake ice phenology of Crystal Bog and Trout Lake, 1981-2005', creators: ['Rosalind Whitcombe', 'North Temperate Lakes LTER', 'Tomasz Kratzenberg'], family: 'Whitcombe', year: '2006' },
  { file: 'iso19139-gmi-url-roles.xml', title: 'Snow water equivalent from airborne gamma surveys, Upper Colorado basin', creators: ['Sarah McClure', 'Chidi Okafor'], family: 'McClure', year: '2014', doi: '10.5067/EXAMPLE0751' },
  { file: 'fgdc-csdgm.xml', title: 'Streambed sediment chemistry of the lower Yakima River basin, Washington', creators: ['Hallie Lindgren', 'U.S. Geological Survey'], family: 'Lindgren', year: '2011', doi: '10.5066/F7EXAMPLE' },
  { file: 'esri-arcgis.xml', title: 'Eelgrass beds of Padilla Bay, 2017 aerial survey', creators: ['Joaquín Ferreira'], family: 'Ferreira', year: '2018' },
  { file: 'datacite-3-points.xml', title: 'Leaf litter decomposition in a mixed hardwood forest, Walker Branch', creators: ['A. Peach', 'Oak Ridge National Laboratory Distributed Active Archive Center'], family: 'Peach', year: '2012', doi: '10.6073/PASTA/EXAMPLE' },
  { file: 'dublin-core-affiliation.xml', title: 'Stream temperature loggers in the Susquehanna Shale Hills observatory', creators: ['Sarah McClure', 'Critical Zone Observatory Program'], family: 'McClure', year: '2017', doi: '10.26208/EXAMPLE' },
  { file: 'schema-org-dataset.jsonld', title: 'Permafrost borehole temperatures, Utqiagvik, Alaska, 2002-2021', creators: ['Kasia Nowak-Ahmed', 'Ivan Petrov', 'Arctic Data Center'], family: 'Nowak-Ahmed', year: '2021', doi: '10.18739/A2EXAMPLE' },
  { file: 'dryad-package.xml', title: 'Data from: Thermal tolerance of intertidal snails along a latitudinal gradient', creators: ['Grace Okonjo', 'Erik A. Lindstrom'], family: 'Okonjo', year: '2017', doi: '10.5061/dryad.example1' },
  { file: 'mercury.xml', title: 'Fine root biomass, Duke Forest FACE experiment, 1998-2008', creators: ['Seth G. Pritchard', 'Ram Oren'], family: 'Pritchard', year: '2010', doi: '10.3334/ORNLDAAC/EXAMPLE' },
];

/**
 * DataCite 4 is outside the federation's format list, so no client can create it: it reaches a
 * node only in wrap mode, with its formatId named in wrap.extraFormats (below).
 */
const DATACITE_4: Standard = { file: 'datacite-4-points.xml', title: 'Salinity intrusion in Mekong Delta canals, dry seasons 2016-2020', creators: ['Thi Lan Nguyen', 'Mekong Delta Monitoring Network'], family: 'Nguyen', year: '2021', doi: '10.5061/EXAMPLE.4P' };

const pidOf = (s: Standard): string => `standards/${s.file}`;
const LAUNCH = {
  executablePath: CHROMIUM,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
};

/** Open the landing page of `pid` and check it against what the document `s` says. */
async function checkLandingPage(browser: Browser, baseUrl: string, pid: string, s: Standard, doc: Buffer): Promise<void> {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  const requests: string[] = [];
  const problems: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => problems.push(`console ${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('dialog', (d) => {
    problems.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  try {
    const url = `${baseUrl}/v2/views/default/${encodeURIComponent(pid)}`;
    const res = await page.goto(url);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-type']).toBe('text/html; charset=utf-8');

    expect(await page.title()).toBe(s.title);
    expect(await page.locator('h1').innerText()).toBe(s.title);
    expect(await page.locator('#creators .creator').allInnerTexts()).toEqual(s.creators);

    const link = s.doi ? `https://doi.org/${s.doi}` : `${baseUrl}/v2/object/${encodeURIComponent(pid)}`;
    const citation = await page.locator('#citation').innerText();
    expect(citation.startsWith(`${s.family}, `) || citation.startsWith(`${s.family} (`), citation).toBe(true);
    expect(citation).toContain(`(${s.year}). ${s.title}.`);
    expect(citation.endsWith(` ${link}`), citation).toBe(true);
    const anchor = page.locator('#citation a');
    expect(await anchor.count()).toBe(1);
    expect(await anchor.getAttribute('href')).toBe(link);
    expect(await anchor.innerText()).toBe(link);
    if (!s.doi) {
      // The node's URL of the document serves the document itself.
      const cited = await page.request.get(link);
      expect(cited.status()).toBe(200);
      expect(Buffer.from(await cited.body()).equals(doc)).toBe(true);
    }

    // Nothing executes or loads: only the JSON-LD block, no other request, no console message or dialog.
    expect(await page.locator('script').evaluateAll((ss) => ss.map((x) => x.getAttribute('type')))).toEqual(['application/ld+json']);
    expect(requests).toEqual([url]);
    expect(problems).toEqual([]);
  } finally {
    await page.close();
  }
}

// Skipped only off CI when no Chromium is installed; CI installs it (.ci/run) and must run it.
describe.skipIf(!existsSync(CHROMIUM) && !process.env.CI)('landing pages of every standard in headless Chromium', () => {
  let node: ViewsNode;
  let browser: Browser;
  const docs = new Map<string, Buffer>();

  beforeAll(async () => {
    node = await startViewsNode();
    const client = new MemberNodeClient({ baseUrl: node.baseUrl, token: node.tokens.writer });
    for (const s of STANDARDS) {
      const bytes = readFileSync(new URL(s.file, FIXTURES));
      docs.set(s.file, bytes);
      const formatId = identifyFormat({ name: s.file, head: bytes.subarray(0, 8192), size: bytes.byteLength });
      // sysmeta() gives public read.
      await client.create(pidOf(s), bytes, sysmeta(pidOf(s), bytes, { formatId, fileName: s.file }));
    }
    browser = await chromium.launch(LAUNCH);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await node?.stop();
  });

  for (const s of STANDARDS) {
    it(`${s.file}: title, persons, citation ending with a link that resolves; nothing runs`, async () => {
      await checkLandingPage(browser, node.baseUrl, pidOf(s), s, docs.get(s.file)!);
    });
  }
});

describe.skipIf(!existsSync(CHROMIUM) && !process.env.CI)('landing page of a DataCite 4 document in a wrapped tree, in headless Chromium', () => {
  let work: string;
  let node: NodeProcess;
  let browser: Browser;
  const doc = readFileSync(new URL(DATACITE_4.file, FIXTURES));

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'memberkit-standards-'));
    mkdirSync(join(work, 'archive'));
    writeFileSync(join(work, 'archive', DATACITE_4.file), doc);
    writeConfig(join(work, 'node'), {
      storage: { type: 'tree', root: join(work, 'archive') },
      wrap: { rightsHolder: 'CN=archive owner', extraFormats: ['http://datacite.org/schema/kernel-4'] },
      extensions: { views: true, packages: true, query: { enabled: false } },
    });
    node = await startNodeProcess(join(work, 'node'));
    browser = await chromium.launch(LAUNCH);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await node?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it(`${DATACITE_4.file} (wrap.extraFormats): title, persons, citation ending with its DOI; nothing runs`, async () => {
    // The scan runs after start: wait until the file is published, under DataCite 4's formatId.
    const meta = `${node.baseUrl}/v2/meta/${encodeURIComponent(DATACITE_4.file)}`;
    let xml = '';
    for (const deadline = Date.now() + 20_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
      const res = await fetch(meta);
      if (res.status === 200) {
        xml = await res.text();
        break;
      }
    }
    expect(xml).toContain('<formatId>http://datacite.org/schema/kernel-4</formatId>');
    await checkLandingPage(browser, node.baseUrl, DATACITE_4.file, DATACITE_4, doc);
  }, 30_000);
});
