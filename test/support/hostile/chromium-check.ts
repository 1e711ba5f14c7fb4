import { chromium, type Browser, type Page } from 'playwright-core';
import { PWNED_MARK } from './documents.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

export interface ScriptCheck {
  url: string;
  status: number | undefined;
  contentType: string | undefined;
  /** The page was downloaded rather than shown (attachment): nothing could run. */
  downloaded: boolean;
  /** window.__pwned after load and after clicking every link. */
  pwned: boolean;
  dialogs: string[];
  /** Console messages a payload wrote (PWNED_MARK). */
  console: string[];
  /** Links, frames and forms whose URL is neither http(s) nor mailto: clickable script or a foreign scheme. */
  unsafeLinks: string[];
  /** Navigation failed for another reason (timeout, connection refused). */
  error?: string;
}

/** True when the check saw anything execute or any link that could. */
export function executed(c: ScriptCheck): boolean {
  return c.pwned || c.dialogs.length > 0 || c.console.length > 0 || c.unsafeLinks.length > 0;
}

async function flag(page: Page): Promise<boolean> {
  return page.evaluate(() => (window as unknown as { __pwned?: unknown }).__pwned !== undefined).catch(() => false);
}

/**
 * Opens pages in one long-lived tab (a new renderer costs seconds on a busy machine) and
 * tells whether anything a payload carries ran: on load, or on clicking every link whose URL
 * is not http(s); a page is safe when no payload ran, no dialog opened, and no link points at
 * a script URL.
 */
export class ScriptChecker {
  private current: ScriptCheck | undefined;

  private constructor(private readonly page: Page) {
    page.on('dialog', (d) => {
      this.current?.dialogs.push(`${d.type()}: ${d.message()}`);
      void d.dismiss().catch(() => undefined);
    });
    page.on('console', (m) => {
      if (m.text().includes(PWNED_MARK)) this.current?.console.push(m.text());
    });
  }

  static async open(browser: Browser): Promise<ScriptChecker> {
    const context = await browser.newContext({ acceptDownloads: false });
    return new ScriptChecker(await context.newPage());
  }

  /** Open `url` (with `headers` on every request) and report what ran. */
  async check(url: string, headers: Record<string, string> = {}): Promise<ScriptCheck> {
    const page = this.page;
    const out: ScriptCheck = { url, status: undefined, contentType: undefined, downloaded: false, pwned: false, dialogs: [], console: [], unsafeLinks: [] };
    await page.goto('about:blank').catch(() => undefined);
    await page.setExtraHTTPHeaders(headers);
    this.current = out;
    try {
      const res = await page.goto(url, { timeout: 30_000, waitUntil: 'load' });
      out.status = res?.status();
      out.contentType = res?.headers()['content-type'];
      await page.waitForTimeout(100);
      out.pwned = await flag(page);
      const unsafe = await page
        .evaluate(() => {
          const urls: string[] = [];
          const check = (u: string | null | undefined): void => {
            if (!u) return;
            try {
              const p = new URL(u, document.baseURI).protocol;
              if (p !== 'http:' && p !== 'https:' && p !== 'mailto:') urls.push(u);
            } catch {
              // Unparseable: the browser will not follow it either.
            }
          };
          for (const a of Array.from(document.querySelectorAll('a[href], area[href]'))) check((a as HTMLAnchorElement).href);
          for (const a of Array.from(document.querySelectorAll('[*|href]'))) check(a.getAttributeNS('http://www.w3.org/1999/xlink', 'href'));
          for (const f of Array.from(document.querySelectorAll('iframe[src], frame[src], embed[src], object[data]'))) check(f.getAttribute('src') ?? f.getAttribute('data'));
          for (const f of Array.from(document.querySelectorAll('form[action], button[formaction]'))) check(f.getAttribute('action') ?? f.getAttribute('formaction'));
          return urls;
        })
        .catch(() => [] as string[]);
      out.unsafeLinks = unsafe;
      if (unsafe.length > 0) {
        // Show that they would run: click each (a CSP may still stop them; the link itself is the finding).
        await page
          .evaluate(() => {
            for (const a of Array.from(document.querySelectorAll('a[href], area[href]'))) {
              const p = (a as HTMLAnchorElement).protocol;
              if (p !== 'http:' && p !== 'https:' && p !== 'mailto:') (a as HTMLElement).click();
            }
          })
          .catch(() => undefined);
        await page.waitForTimeout(100);
        out.pwned ||= await flag(page);
      }
    } catch (err) {
      const msg = (err as Error).message;
      if (/Download is starting|net::ERR_ABORTED/.test(msg)) out.downloaded = true;
      else out.error = msg.split('\n')[0];
    } finally {
      this.current = undefined;
    }
    return out;
  }

  async close(): Promise<void> {
    await this.page.context().close().catch(() => undefined);
  }
}
