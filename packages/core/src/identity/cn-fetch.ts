/** GET a CN resource with a timeout; the body as text, or undefined on 404. */
export async function fetchCn(url: string, options: { timeoutMs: number; token?: string | (() => string | Promise<string>) }): Promise<string | undefined> {
  const token = typeof options.token === 'function' ? await options.token() : options.token;
  const res = await fetch(url, {
    headers: { Accept: 'text/xml', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    signal: AbortSignal.timeout(options.timeoutMs),
  });
  if (res.status === 404) {
    await res.body?.cancel();
    return undefined;
  }
  if (res.status !== 200) {
    await res.body?.cancel();
    throw new Error(`${url} answered HTTP ${res.status}`);
  }
  return res.text();
}

export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}
