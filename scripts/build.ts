// `npm run build`: generated validators, the native addon, then one esbuild bundle per executable.
// Each bundle is CommonJS (a lone file in /opt/cni/bin has no package.json saying "module"),
// minified, with the addon embedded, and starts with a marker line that lib/cni/delegate.ts
// reads to recognise our own bundles for in-process delegation.
import { build } from 'esbuild';
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ADDON_PATHS, buildAddon, embedAddonPlugin } from './build/addon.ts';
import { etcd3ProtosPlugin } from './build/etcd3-protos.ts';
import { formatCodeCachedBundle } from './build/code-cache.ts';
import { BUNDLE_OPTIONS } from './build/esbuild-options.ts';
import { ENTRIES } from './build/entries.ts';
import { generateValidators } from './gen-validators.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const only = args.filter((a) => !a.startsWith('--'));
  // `--no-code-cache` builds plain bundles (to measure what the code cache gives).
  const codeCache = !args.includes('--no-code-cache');
  const started = performance.now();
  await generateValidators();
  await buildAddon();
  const outDir = join(root, 'dist', 'bin');
  mkdirSync(outDir, { recursive: true });
  // The repository's package.json says "type": "module"; without this marker Node would load the
  // extension-less CommonJS bundles under dist/ as ES modules. A lone copy elsewhere needs nothing.
  // Written aside and renamed: plugins running from dist/ during a rebuild read it at every start.
  const marker = join(root, 'dist', 'package.json');
  writeFileSync(`${marker}.tmp`, '{ "type": "commonjs" }\n');
  renameSync(`${marker}.tmp`, marker);
  const entries = only.length > 0 ? ENTRIES.filter((e) => only.includes(e.name)) : ENTRIES;
  await Promise.all(
    entries.map(async (entry) => {
      const outfile = join(outDir, entry.name);
      const header = `#!/usr/bin/env node\n// weft-bundle ${entry.name} ${version}\n`;
      const res = await build({
        entryPoints: [join(root, entry.source)],
        outfile,
        ...BUNDLE_OPTIONS,
        // import.meta.url is only read on the source-tree path of lib/sys (never in a bundle).
        logOverride: { 'empty-import-meta': 'silent' },
        plugins: [embedAddonPlugin(entry.packetIo === true ? ADDON_PATHS.full : ADDON_PATHS.lean), etcd3ProtosPlugin()],
        ...(entry.external ? { external: entry.external } : {}),
      });
      const body = res.outputFiles.find((f) => f.path === outfile)?.text;
      if (body === undefined) throw new Error(`esbuild produced no ${outfile}`);
      const text = codeCache && entry.codeCache !== false ? await formatCodeCachedBundle(entry.name, header, body) : `${header}${body}`;
      // Written beside and renamed: a plugin exec'd during the build never reads half a file.
      writeFileSync(`${outfile}.tmp`, text, { mode: 0o755 });
      renameSync(`${outfile}.tmp`, outfile);
      chmodSync(outfile, 0o755);
    }),
  );
  const ms = Math.round(performance.now() - started);
  process.stderr.write(`built ${entries.map((e) => e.name).join(', ')} into dist/bin in ${ms} ms\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`build failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
