// Build step: the esbuild body of one executable (no header, no code-cache loader): what
// dist/bin/<name> runs, and what the standalone executable carries per entry in its run-cache mode.
import { build } from 'esbuild';
import { join } from 'node:path';
import { embedAddonPlugin } from './addon.ts';
import type { Entry } from '../../cli/entries.ts';
import { BUNDLE_OPTIONS } from './esbuild-options.ts';
import { etcd3ProtosPlugin } from './etcd3-protos.ts';
import { lazyChunkPlugin } from './lazy-chunk.ts';

/** Bundles `entry` (with the addon at `addonPath` embedded) and returns the JavaScript text. */
export async function bundleBody(root: string, entry: Entry, addonPath: string): Promise<string> {
  const outfile = join(root, 'dist', 'bin', entry.name);
  const res = await build({
    entryPoints: [join(root, entry.source)],
    outfile,
    ...BUNDLE_OPTIONS,
    // import.meta.url is only read on the source-tree path of lib/sys (never in a bundle).
    logOverride: { 'empty-import-meta': 'silent' },
    plugins: [embedAddonPlugin(addonPath), etcd3ProtosPlugin(), lazyChunkPlugin([embedAddonPlugin(addonPath), etcd3ProtosPlugin()])],
    ...(entry.external ? { external: entry.external } : {}),
  });
  const body = res.outputFiles.find((f) => f.path === outfile)?.text;
  if (body === undefined) throw new Error(`esbuild produced no ${outfile}`);
  return body;
}
