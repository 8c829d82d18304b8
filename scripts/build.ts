// `npm run build`: generated validators, the native addon, then one esbuild bundle per executable.
// Each bundle is CommonJS (a lone file in /opt/cni/bin has no package.json saying "module"),
// minified, with the addon embedded, and starts with a marker line that lib/cni/delegate.ts
// reads to recognise our own bundles for in-process delegation. Then the standalone executable
// dist/sea/weft (scripts/build/sea.ts), which needs no Node.js on the host.
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ADDON_PATHS, buildAddon } from './build/addon.ts';
import { bundleBody } from './build/bundle.ts';
import { formatCodeCachedBundle } from './build/code-cache.ts';
import { buildStandalone, SEA_STARTUPS, type SeaStartup } from './build/sea.ts';
import { ENTRIES } from '../cli/entries.ts';
import { generateValidators } from './gen-validators.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const only = args.filter((a) => !a.startsWith('--'));
  // `--no-code-cache` builds plain bundles (to measure what the code cache gives).
  const codeCache = !args.includes('--no-code-cache');
  // The standalone file is built with the full set (or when named: `npm run build -- sea`); `--no-sea` skips it.
  const sea = !args.includes('--no-sea') && (only.length === 0 || only.includes('sea'));
  // `--sea-startup=blob-cache|run-cache|snapshot|snapshot-cache` (see scripts/build/sea.ts; docs/standalone.md has the measurements).
  const seaStartup = (args.find((a) => a.startsWith('--sea-startup='))?.slice('--sea-startup='.length) ?? 'run-cache') as SeaStartup;
  if (!SEA_STARTUPS.includes(seaStartup)) throw new Error(`--sea-startup: ${seaStartup} is not one of ${SEA_STARTUPS.join(', ')}`);
  const started = performance.now();
  await generateValidators();
  const addonPath = await buildAddon();
  const outDir = join(root, 'dist', 'bin');
  mkdirSync(outDir, { recursive: true });
  // The repository's package.json says "type": "module"; without this marker Node would load the
  // extension-less CommonJS bundles under dist/ as ES modules. A lone copy elsewhere needs nothing.
  // Written aside and renamed: plugins running from dist/ during a rebuild read it at every start.
  const marker = join(root, 'dist', 'package.json');
  writeFileSync(`${marker}.tmp`, '{ "type": "commonjs" }\n');
  renameSync(`${marker}.tmp`, marker);
  const entries = only.length > 0 ? ENTRIES.filter((e) => only.includes(e.name)) : ENTRIES;
  const bodies = new Map<string, string>();
  await Promise.all(
    entries.map(async (entry) => {
      const outfile = join(outDir, entry.name);
      const header = `#!/usr/bin/env node\n// weft-bundle ${entry.name} ${version}\n`;
      // weftd embeds the full addon (udp packet I/O); the plugins the lean build (see cli/entries.ts).
      const body = await bundleBody(root, entry, entry.packetIo === true ? ADDON_PATHS.full : ADDON_PATHS.lean);
      bodies.set(entry.name, body);
      const text = codeCache && entry.codeCache !== false ? await formatCodeCachedBundle(entry.name, header, body) : `${header}${body}`;
      // Written beside and renamed: a plugin exec'd during the build never reads half a file.
      writeFileSync(`${outfile}.tmp`, text, { mode: 0o755 });
      renameSync(`${outfile}.tmp`, outfile);
      chmodSync(outfile, 0o755);
    }),
  );
  const ms = Math.round(performance.now() - started);
  if (entries.length > 0) process.stderr.write(`built ${entries.map((e) => e.name).join(', ')} into dist/bin in ${ms} ms\n`);
  if (sea) {
    const t = performance.now();
    const r = await buildStandalone(root, addonPath, version, seaStartup, bodies);
    const what = r.rebuilt ? `built ${r.path} (${seaStartup})` : `${r.path} is up to date`;
    process.stderr.write(`${what} in ${Math.round(performance.now() - t)} ms\n`);
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`build failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
