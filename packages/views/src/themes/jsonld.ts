import { jsonLdOf } from '../landing.js';
import type { Theme } from '../theme.js';

/** The schema.org Dataset JSON-LD of the landing page, alone. */
export const jsonLdTheme: Theme = {
  name: 'jsonld',
  description: 'schema.org Dataset description (JSON-LD), as embedded in the default landing page',
  mediaType: 'application/ld+json',
  cacheable: true,
  async render(ctx) {
    return { body: JSON.stringify(jsonLdOf(await ctx.page()), null, 2) };
  },
};
