// Build step for the standalone executable dist/sea/weft: every entry of cli/entries.ts in
// one Node single executable application (`node --experimental-sea-config`, then postject into a copy
// of this node), in one of four start-up modes (SeaStartup; docs/standalone.md has them measured).
// The file carries the build machine's node binary; it is rebuilt only when its inputs change.
import { build, type Plugin } from 'esbuild';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { embedAddonPlugin } from './addon.ts';
import { bundleBody } from './bundle.ts';
import { ENTRIES } from '../../cli/entries.ts';
import { BUNDLE_OPTIONS } from './esbuild-options.ts';
import { etcd3ProtosPlugin } from './etcd3-protos.ts';
import { writeFileAtomicSync } from '../../lib/fs/atomic-write.ts';

/**
 * How V8 start-up work is saved: `blob-cache`, the code cache node makes at build time (useCodeCache)
 * of one bundle of every entry (cli/standalone/main.ts) as main script; `run-cache`, each entry's own
 * bundle body (the one of dist/bin/<name>) as an asset, run by cli/standalone/loader.ts through
 * lib/sys/code-cache.ts (a cache per executable and command, written by its second run, in /run/weft);
 * `snapshot`, a V8 start-up snapshot with every plugin's modules loaded (useSnapshot); `snapshot-cache`,
 * run-cache's bodies and caches started from a snapshot in which the Node functions the plugins call are
 * already compiled (cli/standalone/snapshot-loader.ts). Both snapshot modes start only on a CPU with the
 * build machine's feature set: node refuses a snapshot whose V8 tag (version, flags, CPU features) differs.
 */
export type SeaStartup = 'blob-cache' | 'run-cache' | 'snapshot' | 'snapshot-cache';
export const SEA_STARTUPS: readonly SeaStartup[] = ['blob-cache', 'run-cache', 'snapshot', 'snapshot-cache'];

/** The fuse postject flips so that node looks for the injected blob (node's src/node_sea.cc). */
const SEA_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

/** The modules each entry point imports directly (from esbuild's metafile), by entry name. */
async function entryImports(root: string, names: ReadonlySet<string>): Promise<Map<string, string[]>> {
  const chosen = ENTRIES.filter((e) => names.has(e.name));
  const res = await build({ ...BUNDLE_OPTIONS, minify: false, entryPoints: chosen.map((e) => join(root, e.source)), outdir: join(root, 'dist', 'sea', 'meta'), absWorkingDir: root, metafile: true, logLevel: 'silent' });
  const out = new Map<string, string[]>();
  for (const e of chosen) {
    const input = res.metafile.inputs[e.source];
    if (input === undefined) throw new Error(`sea: ${e.source} is not in esbuild's metafile`);
    out.set(e.name, input.imports.filter((i) => !i.external).map((i) => join(root, i.path)));
  }
  return out;
}

/**
 * esbuild plugin: replaces cli/standalone/sea-entries.ts with one lazy `require` of each entry point (esbuild
 * runs an ES module's body at its first require) and, for the entries in `warm`, one of the modules
 * that entry point imports.
 */
export function seaEntriesPlugin(root: string, warm: ReadonlyMap<string, string[]> = new Map()): Plugin {
  const req = (path: string): string => `require(${JSON.stringify(path)});`;
  const lines = ENTRIES.map((e) => {
    const w = warm.get(e.name);
    const warmFn = w === undefined ? '' : ` warm: () => { ${w.map(req).join(' ')} },`;
    return `  ${JSON.stringify(e.name)}: { run: () => { ${req(join(root, e.source))} },${warmFn} },`;
  });
  const contents = `export const SEA_ENTRIES = {\n${lines.join('\n')}\n};\n`;
  return {
    name: 'weft-sea-entries',
    setup(b) {
      b.onLoad({ filter: /[\\/]cli[\\/]standalone[\\/]sea-entries\.ts$/ }, () => ({ contents, loader: 'js', resolveDir: root }));
    },
  };
}

/** The bundle the SEA runs as its main script. */
async function bundleStandalone(root: string, addonPath: string, version: string, startup: SeaStartup): Promise<string> {
  // The snapshot holds the plugins' modules loaded; weftd and the CLI (start-up off the hot path) load at run time.
  const warm = startup === 'snapshot' ? await entryImports(root, new Set(ENTRIES.filter((e) => e.codeCache !== false).map((e) => e.name))) : new Map<string, string[]>();
  const res = await build({
    entryPoints: [join(root, 'cli', 'standalone', startup === 'snapshot' ? 'snapshot.ts' : 'main.ts')],
    outfile: join(root, 'dist', 'sea', 'weft.cjs'),
    ...BUNDLE_OPTIONS,
    banner: { js: `// weft-standalone ${version}` },
    logOverride: { 'empty-import-meta': 'silent' },
    plugins: [seaEntriesPlugin(root, warm), embedAddonPlugin(addonPath), etcd3ProtosPlugin()],
  });
  const text = res.outputFiles[0]?.text;
  if (text === undefined) throw new Error('sea: esbuild produced no bundle');
  return text;
}

/** The run-cache mode's main script: cli/standalone/loader.ts with the sha256 of each entry's body defined. */
async function bundleLoader(root: string, shas: Record<string, string>, entry: string): Promise<string> {
  const res = await build({
    entryPoints: [join(root, 'cli', 'standalone', entry)],
    ...BUNDLE_OPTIONS,
    define: { WEFT_SEA_BODIES: JSON.stringify(shas) },
  });
  const text = res.outputFiles[0]?.text;
  if (text === undefined) throw new Error('sea: esbuild produced no loader');
  return text;
}

function run(cmd: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code, signal) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')} failed (${signal ?? `exit ${String(code)}`})`))));
  });
}

/**
 * Builds dist/sea/weft unless the same bundle was already made into it by this node binary with the
 * same start-up mode. Returns the output path and whether it was rebuilt.
 */
export async function buildStandalone(root: string, addonPath: string, version: string, startup: SeaStartup, built: ReadonlyMap<string, string> = new Map()): Promise<{ path: string; rebuilt: boolean }> {
  const dir = join(root, 'dist', 'sea');
  const out = join(dir, 'weft');
  mkdirSync(dir, { recursive: true });
  let bundle: string;
  let loaderText = '';
  const bodies = new Map<string, string>();
  const bodyAssets = startup === 'run-cache' || startup === 'snapshot-cache';
  if (bodyAssets) {
    for (const e of ENTRIES) bodies.set(e.name, built.get(e.name) ?? (await bundleBody(root, e, addonPath)));
    const shas = Object.fromEntries([...bodies].map(([name, body]) => [name, createHash('sha256').update(body).digest('hex')]));
    loaderText = await bundleLoader(root, shas, startup === 'run-cache' ? 'loader.ts' : 'snapshot-loader.ts');
    bundle = [...bodies.values()].join('\0');
  } else {
    bundle = await bundleStandalone(root, addonPath, version, startup);
  }
  const node = statSync(process.execPath);
  const key = createHash('sha256').update(`${process.execPath}\0${node.size}\0${node.mtimeMs}\0${process.version}\0${startup}\0`).update(bundle).update('\0').update(loaderText).digest('hex');
  const keyFile = join(dir, 'weft.key');
  if (existsSync(out) && existsSync(keyFile) && readFileSync(keyFile, 'utf8') === key) return { path: out, rebuilt: false };
  const main = join(dir, 'weft.cjs');
  const blob = join(dir, 'weft.blob');
  let config: Record<string, unknown> = { main, output: blob, disableExperimentalSEAWarning: true, ...(startup === 'snapshot' || startup === 'snapshot-cache' ? { useSnapshot: true } : { useCodeCache: true }) };
  if (bodyAssets) {
    writeFileSync(main, loaderText);
    const assets: Record<string, string> = {};
    mkdirSync(join(dir, 'bodies'), { recursive: true });
    for (const [name, body] of bodies) {
      assets[`body-${name}`] = join(dir, 'bodies', `${name}.cjs`);
      writeFileSync(join(dir, 'bodies', `${name}.cjs`), body);
    }
    config = { ...config, assets };
  } else {
    writeFileSync(main, bundle);
  }
  writeFileSync(join(dir, 'sea-config.json'), `${JSON.stringify(config, null, 2)}\n`);
  await run(process.execPath, ['--experimental-sea-config', join(dir, 'sea-config.json')], dir);
  const nodeBytes = readFileSync(process.execPath);
  if (!nodeBytes.includes(`${SEA_FUSE}:0`)) {
    throw new Error(`${process.execPath} (node ${process.version}) cannot become a single executable application (no ${SEA_FUSE} in it): build with an official Node.js 20.12+ binary, or skip this step with \`npm run build -- --no-sea\``);
  }
  const tmp = `${out}.tmp`;
  rmSync(tmp, { force: true });
  writeFileSync(tmp, nodeBytes, { mode: 0o755 });
  const { inject } = createRequire(import.meta.url)('postject') as { inject: (file: string, name: string, data: Buffer, opts: { sentinelFuse: string }) => Promise<void> };
  await inject(tmp, 'NODE_SEA_BLOB', readFileSync(blob), { sentinelFuse: SEA_FUSE });
  // Written again in 64 kB pieces (lib/fs/atomic-write.ts says why: postject writes the file in one
  // piece, and a file written so keeps every process that maps it at 10-20 MiB more RSS), then
  // renamed into place: a test or install reading dist/sea/weft never sees a half-injected file.
  writeFileAtomicSync(out, readFileSync(tmp), { mode: 0o755, exactMode: true, fsync: false });
  rmSync(tmp, { force: true });
  writeFileSync(keyFile, key);
  return { path: out, rebuilt: true };
}
