// Build steps for the native addon: compile it with node-gyp when its sources changed, and embed
// its bytes into each bundle by replacing lib/sys/embedded.ts (see lib/sys/loader.ts for the unpacking).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'esbuild';

const sysDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'lib', 'sys');
const addonPath = join(sysDir, 'build', 'Release', 'weft_sys.node');
/** The two builds of lib/sys (binding.gyp): weftd's, with the udp packet I/O, and the plugins' lean one. */
export const ADDON_PATHS = { full: addonPath, lean: join(sysDir, 'build', 'Release', 'weft_sys_lean.node') } as const;
const sources = ['weft_sys.c', 'weft_sys.h', 'packet_args.c', 'tun_io.c', 'udp_io.c', 'binding.gyp'].map((f) => join(sysDir, f));

/** Compiles both builds of lib/sys with `node-gyp rebuild` unless they are newer than their sources; returns weftd's .node path. */
export async function buildAddon(): Promise<string> {
  if (isUpToDate()) return addonPath;
  const nodeGyp = createRequire(import.meta.url).resolve('node-gyp/bin/node-gyp.js');
  const nodedir = localNodeDir();
  await run(process.execPath, [nodeGyp, 'rebuild', '--loglevel=warn', ...(nodedir !== undefined ? [`--nodedir=${nodedir}`] : []), '-C', sysDir]);
  if (!isUpToDate()) throw new Error(`node-gyp finished but ${addonPath} or ${ADDON_PATHS.lean} is missing or older than its sources`);
  return addonPath;
}

// Headers of the running node, so node-gyp never downloads them: npm's configured nodedir when run
// under npm, else the prefix node runs from when it ships include/node (Debian: /usr/bin/node -> /usr).
function localNodeDir(): string | undefined {
  const fromNpm = process.env['npm_config_nodedir'];
  if (fromNpm !== undefined && fromNpm !== '') return fromNpm;
  const configured = (process.config.variables as { node_prefix?: unknown }).node_prefix;
  const prefixes = [dirname(dirname(process.execPath)), ...(typeof configured === 'string' ? [configured] : [])];
  return prefixes.find((p) => existsSync(join(p, 'include', 'node', 'node_api.h')));
}

function isUpToDate(): boolean {
  let built: number;
  try {
    built = Math.min(statSync(ADDON_PATHS.full).mtimeMs, statSync(ADDON_PATHS.lean).mtimeMs);
  } catch {
    return false;
  }
  return sources.every((src) => statSync(src).mtimeMs <= built);
}

function run(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'] });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${args.slice(0, 2).join(' ')} failed (${signal ?? `exit ${String(code)}`})`));
    });
  });
}

/** Contents that replace lib/sys/embedded.ts in a bundle, cached per addon file version. */
const cache = new Map<string, string>();

function embeddedModule(nodePath: string): string {
  const st = statSync(nodePath);
  const key = `${nodePath}:${st.size}:${st.mtimeMs}`;
  let contents = cache.get(key);
  if (contents === undefined) {
    const bytes = readFileSync(nodePath);
    // base64 as a function (lib/sys/loader.ts EmbeddedAddon): its literal stays out of the code cache.
    const sha256 = JSON.stringify(createHash('sha256').update(bytes).digest('hex'));
    contents = `export const EMBEDDED_ADDON = { sha256: ${sha256}, size: ${bytes.length}, base64: function () { return ${JSON.stringify(bytes.toString('base64'))}; } };\n`;
    cache.set(key, contents);
  }
  return contents;
}

/** esbuild plugin: replaces lib/sys/embedded.ts with the addon at `nodePath` as base64 plus its sha256. */
export function embedAddonPlugin(nodePath: string): Plugin {
  return {
    name: 'weft-embed-addon',
    setup(build) {
      build.onLoad({ filter: /[\\/]lib[\\/]sys[\\/]embedded\.ts$/ }, () => ({
        contents: embeddedModule(nodePath),
        loader: 'js',
      }));
    },
  };
}
