import { describe, expect, it } from 'vitest';
import type { ApiVersion } from '@memberkit/types';
import { expectAnyError } from './client.js';
import { VERSIONS, type NodeSuiteContext } from './context.js';

/**
 * Node suite group `errors`: unknown paths and wrong methods (DataONE error XML, status == errorCode),
 * over HTTP; the paths cover v1, v2 and no version, so `versions` is not used.
 */
export function registerErrorsTests(ctx: NodeSuiteContext, _versions: readonly ApiVersion[] = VERSIONS): void {
  describe('unknown paths and wrong methods answer DataONE error XML', () => {
    it('404 NotFound error documents, status == errorCode', async () => {
      const cases: Array<[string, string]> = [
        ['GET', '/v2/no-such-operation'],
        ['GET', '/v1/objects'],
        ['GET', '/v3/node'],
        ['GET', '/no-such-path'],
        ['DELETE', '/v2/node'],
        ['POST', '/v1/monitor/ping'],
        ['PATCH', '/v2/object/x'],
        ['PUT', '/v1/meta'],
      ];
      const head = await ctx.http.head('/v2/no-such-operation');
      expect(head.status).toBe(404);
      expect(head.headers.get('dataone-exception-name')).toBe('NotFound');
      expect(head.headers.get('dataone-exception-detailcode')).not.toBeNull();
      for (const [method, path] of cases) {
        const res = await ctx.http.request(method, path, { as: 'writer', ...(method === 'GET' || method === 'DELETE' ? {} : { body: '' }) });
        const { name } = expectAnyError(res, 404);
        expect(name, res.label).toBe('NotFound');
      }
    });
  });
}
