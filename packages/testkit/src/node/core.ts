import { describe, expect, it } from 'vitest';
import type { ApiVersion } from '@memberkit/types';
import { attr, child, childText, children, expectDocument, expectStatus, TYPES_V1, TYPES_V2 } from './client.js';
import { VERSIONS, type NodeSuiteContext } from './context.js';

/**
 * Node suite group `core`: MNCore.ping and MNCore.getCapabilities, over HTTP for each of `versions`.
 */
export function registerCoreTests(ctx: NodeSuiteContext, versions: readonly ApiVersion[] = VERSIONS): void {
  describe('MNCore.ping and getCapabilities', () => {
    for (const v of versions) {
      it(`${v}: ping answers 200 with a current Date header`, async () => {
        const res = await ctx.http.get(`/${v}/monitor/ping`);
        expectStatus(res, 200);
        const date = res.headers.get('date');
        expect(date, 'Date header').not.toBeNull();
        expect(Math.abs(Date.parse(date!) - Date.now())).toBeLessThan(5 * 60_000);
      });

      it(`${v}: getCapabilities at /node is the node document`, async () => {
        await capabilitiesAt(`/${v}/node`);
      });

      it(`${v}: getCapabilities at /${v}/ (GET / from {base_url}/{version}) is the node document`, async () => {
        await capabilitiesAt(`/${v}/`);
      });
    }

    async function capabilitiesAt(path: string): Promise<void> {
      const v = path.startsWith('/v1') ? 'v1' : 'v2';
      {
        {
          const doc = expectDocument(await ctx.http.get(path), 'node', v === 'v1' ? TYPES_V1 : TYPES_V2);
          expect(childText(doc.root, 'identifier')).toBe(ctx.target.nodeId);
          expect(attr(doc.root, 'type')).toBe('mn');
          const names = children(child(doc.root, 'services'), 'service').map((s) => attr(s, 'name'));
          for (const api of ['MNCore', 'MNRead', 'MNAuthorization', 'MNStorage']) expect(names).toContain(api);
        }
      }
    }

    it('getCapabilities at /v2 (no slash) and at the bare base address', async () => {
      for (const path of ['/v2', '', '/']) {
        const res = await ctx.http.get(path);
        const doc = expectDocument(res, 'node');
        expect([TYPES_V1, TYPES_V2]).toContain(doc.rootNamespace);
        expect(childText(doc.root, 'identifier'), res.label).toBe(ctx.target.nodeId);
      }
    });
  });
}
