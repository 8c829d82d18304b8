// The loopback bundle's ceiling (scripts/bench/sizes.ts SIZE_LIMITS), checked on a bundle built here
// the way `npm run build` builds it (body with the lean addon embedded, code-cache loader, header),
// so it holds for the sources as they are, whether or not dist/ was rebuilt. Needs the addon built
// (`npm run build`, as the generated validators every unit test imports); no root.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ADDON_PATHS } from '../../../../scripts/build/addon.ts';
import { bundleBody } from '../../../../scripts/build/bundle.ts';
import { formatCodeCachedBundle } from '../../../../scripts/build/code-cache.ts';
import { SIZE_LIMITS } from '../../../../scripts/bench/sizes.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..', '..');

test('dist/bin/loopback stays within its ceiling', async () => {
  assert.ok(existsSync(ADDON_PATHS.lean), `${ADDON_PATHS.lean} is missing: run npm run build`);
  const limit = SIZE_LIMITS['loopback'];
  assert.ok(limit !== undefined);
  const body = await bundleBody(ROOT, { name: 'loopback', source: 'plugins/loopback/main.ts' }, ADDON_PATHS.lean);
  const file = await formatCodeCachedBundle('loopback', '#!/usr/bin/env node\n// weft-bundle loopback 0.0.0\n', body);
  const bytes = Buffer.byteLength(file);
  assert.ok(bytes <= limit, `loopback is ${bytes} bytes, over its ${limit}: see what it pulls in (esbuild metafile) before raising the limit`);
  assert.ok(bytes > 20_000, `a ${bytes}-byte loopback cannot be the real bundle`);
});
