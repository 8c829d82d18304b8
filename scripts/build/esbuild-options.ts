// esbuild options every weft bundle is built with: the bundle bodies (scripts/build.ts) and the
// code-cache loader placed in front of a body (scripts/build/code-cache.ts) end up in one file, so
// they must agree on format, target and charset.
import type { BuildOptions } from 'esbuild';

/**
 * One minified CommonJS file for Node 20 (a lone file in /opt/cni/bin has no package.json saying
 * "module"). ASCII only: the code-cached layout comments the body out line by line, and a non-ASCII
 * line terminator (U+2028/U+2029) would end a `//` comment early (see lib/sys/code-cache.ts).
 */
export const BUNDLE_OPTIONS = {
  bundle: true,
  write: false,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  minify: true,
  charset: 'ascii',
  legalComments: 'none',
  logLevel: 'warning',
} as const satisfies BuildOptions;
