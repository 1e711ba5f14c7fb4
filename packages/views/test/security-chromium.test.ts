import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import { MemberNodeClient } from '@memberkit/client';
import { resourceMap, startViewsNode, sysmeta, type ViewsNode } from './support/node.js';
import { EML, EML_FORMAT, ORE_FORMAT } from './support/dataset.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const enc = encodeURIComponent;

/** Script in every field a page shows, in the bytes, and `javascript:` in every URL a reader takes. */
const TITLE = 'Pwn </script><script>window.__pwned="title"</script><img src=x onerror="window.__pwned=\'img\'"> & <!-- done';
const escXml = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const XHTML_SCRIPT = '<h:script xmlns:h="http://www.w3.org/1999/xhtml">window.__pwned="xhtml"</h:script>';

/** EML whose licence is a `javascript:` URL (licensed/url), with an XHTML script in its bytes. */
const HOSTILE_LICENSED = Buffer.from(
  EML.toString('utf8')
    .replace(/<title>Soil temperature[^<]*<\/title>/, `<title>${escXml(TITLE)}</title>`)
    .replace('<url>https://spdx.org/licenses/CC-BY-4.0.html</url>', '<url>javascript:window.__pwned="license"//</url>')
    .replace('<language>english</language>', `<language>english</language>${XHTML_SCRIPT}`),
);
/** EML whose rights are a `ulink` to a `javascript:` URL. */
const HOSTILE_ULINK = Buffer.from(
  EML.toString('utf8').replace(
    /<licensed>[\s\S]*?<\/licensed>/,
    '<intellectualRights><para><ulink url="JavaScript:window.__pwned=&quot;ulink&quot;"><citetitle>Free to use</citetitle></ulink></para></intellectualRights>',
  ),
);

describe.skipIf(!existsSync(CHROMIUM) && !process.env.CI)('hostile metadata: no page runs script, links are http(s) only', () => {
  let node: ViewsNode;
  let browser: Browser;
  const get = (path: string, headers: Record<string, string> = {}): Promise<Response> => fetch(`${node.baseUrl}${path}`, { headers });

  beforeAll(async () => {
    node = await startViewsNode();
    const client = new MemberNodeClient({ baseUrl: node.baseUrl, token: node.tokens.writer });
    // The uploader says its metadata is text/html: the node must not serve it as such.
    await client.create('hostile-eml', HOSTILE_LICENSED, sysmeta('hostile-eml', HOSTILE_LICENSED, { formatId: EML_FORMAT, mediaType: { name: 'text/html', property: [] } }));
    await client.create('hostile-ulink', HOSTILE_ULINK, sysmeta('hostile-ulink', HOSTILE_ULINK, { formatId: EML_FORMAT }));
    const data = Buffer.from('a,b\n1,2\n');
    await client.create('hostile-data.csv', data, sysmeta('hostile-data.csv', data, { formatId: 'text/csv', fileName: 'invoice\u202Etxt.exe' }));
    const map = resourceMap('hostile-map', 'hostile-eml', ['hostile-data.csv']);
    await client.create('hostile-map', map, sysmeta('hostile-map', Buffer.from(map), { formatId: ORE_FORMAT }));
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  });
  afterAll(async () => {
    await browser?.close();
    await node?.stop();
  });

  it('nothing executes in headless Chromium on any view of the hostile objects; no javascript: link', async () => {
    const pids = ['hostile-eml', 'hostile-ulink', 'hostile-data.csv', 'hostile-map'];
    const page = await browser.newPage();
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    // The pages a browser renders as documents (the JSON-LD view is checked by its headers below).
    for (const pid of pids) {
      for (const theme of ['default', 'metadata']) {
        const url = `${node.baseUrl}/v2/views/${theme}/${enc(pid)}`;
        const res = await page.goto(url);
        expect(res?.status(), url).toBe(200);
        expect(await page.evaluate(() => (window as { __pwned?: unknown }).__pwned), url).toBeUndefined();
        // Every link is http(s): a licence or rights URL that is not is shown as text.
        const hrefs = await page.locator('a[href]').evaluateAll((as) => as.map((a) => a.getAttribute('href') ?? ''));
        for (const href of hrefs) expect(href, url).toMatch(/^https?:\/\//);
      }
    }
    expect(dialogs).toEqual([]);
    await page.close();
  }, 120_000);

  it('the metadata view is plain text, never the uploader-named media type', async () => {
    const res = await get(`/v2/views/metadata/hostile-eml`);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await res.text()).toContain(XHTML_SCRIPT);
    // A data file's metadata view shows its package's document, also as text.
    expect((await get(`/v2/views/metadata/hostile-data.csv`)).headers.get('content-type')).toBe('text/plain; charset=utf-8');
  });

  it('the landing page keeps the hostile title as text: the JSON-LD block parses and holds it verbatim; licence without link', async () => {
    const page = await browser.newPage();
    await page.goto(`${node.baseUrl}/v2/views/default/hostile-eml`);
    expect(await page.locator('h1').innerText()).toBe(TITLE);
    const blocks = await page.locator('script[type="application/ld+json"]').allTextContents();
    expect(blocks).toHaveLength(1);
    const ld = JSON.parse(blocks[0]!) as { name: string; license?: string };
    expect(ld.name).toBe(TITLE);
    expect(ld.license).toBe('Creative Commons Attribution 4.0 International');
    expect(await page.locator('script').count()).toBe(1);
    expect(await page.locator('#license').innerText()).toContain('Creative Commons Attribution 4.0 International');
    expect(await page.locator('#license a').count()).toBe(0);
    // The stylesheet is allowed by the policy (by hash): the page is styled.
    expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe('rgb(246, 248, 250)');
    // A file name with a bidirectional override is shown without it.
    await page.goto(`${node.baseUrl}/v2/views/default/hostile-data.csv`);
    expect(await page.locator('#files').innerText()).toContain('invoicetxt.exe');
    expect(await page.content()).not.toContain('\u202E');
    await page.close();
    const ulinkLd = (await (await get('/v2/views/jsonld/hostile-ulink')).json()) as { license?: string };
    expect(ulinkLd.license).toBe('Free to use');
  }, 60_000);

  it('security headers on every view and package response, errors included; CSP strict', async () => {
    const html = await get('/v2/views/default/hostile-eml');
    const csp = html.headers.get('content-security-policy') ?? '';
    for (const d of ["default-src 'none'", "frame-ancestors 'none'", "base-uri 'none'", "form-action 'none'"]) expect(csp).toContain(d);
    expect(csp).not.toMatch(/script-src/);
    expect(csp).not.toContain('unsafe-inline');
    for (const path of ['/v2/views/default/hostile-eml', '/v2/views/jsonld/hostile-eml', '/v2/views/metadata/hostile-eml', '/v2/views/default/no-such-object', '/v2/views', `/v2/packages/application%2Fbagit-097/hostile-map`, '/v2/packages/application%2Fbagit-097/no-such-map']) {
      // HEAD too: Hono answers it from the GET response, and headers must survive that copy.
      for (const method of ['GET', 'HEAD']) {
        const res = await fetch(`${node.baseUrl}${path}`, { method });
        await res.arrayBuffer();
        const what = `${method} ${path}`;
        expect(res.headers.get('x-content-type-options'), what).toBe('nosniff');
        expect(res.headers.get('x-frame-options'), what).toBe('DENY');
        expect(res.headers.get('content-security-policy'), what).toContain("frame-ancestors 'none'");
        expect(res.headers.get('vary') ?? '', what).toMatch(/Authorization/);
      }
    }
  });

  it('X-Forwarded-Host/Proto from a client do not change links or JSON-LD', async () => {
    const res = await get('/v2/views/default/hostile-map', { 'X-Forwarded-Host': 'evil.example', 'X-Forwarded-Proto': 'javascript' });
    const html = await res.text();
    expect(html).not.toContain('evil.example');
    expect(html).not.toContain('javascript://');
    expect(html).toContain(`<link rel="canonical" href="${node.baseUrl}/v2/views/default/hostile-map"/>`);
    const ld = (await (await get('/v2/views/jsonld/hostile-map', { 'X-Forwarded-Host': 'evil.example', 'X-Forwarded-Proto': 'https' })).json()) as { '@id': string };
    expect(ld['@id']).toBe(`${node.baseUrl}/v2/views/default/hostile-map`);
  });
});
