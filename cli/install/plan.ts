// What an install writes: the plugin executables into the CNI bin dir, weftd (flannel backends),
// the conflist, weftd's net-conf.json and systemd unit. Reads the sources; writes nothing.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENTRIES } from '../entries.ts';
import { assertWeftdHasKube, renderWeftdEnv } from './lease-source.ts';
import { usesWeftd, type InstallOptions } from './options.ts';
import { conflistTypes, renderConflist, renderNetConf, renderWeftdUnit, unitNetConfPath, weftdEnvPath } from './render.ts';

/** One file to install. */
export interface PlannedFile {
  path: string;
  data: Uint8Array;
  mode: number;
  /** Short description for the report ("plugin bridge", "conflist"). */
  what: string;
  /** A hard link to this planned path (written earlier in the plan) instead of a file of its own; `data` is the same bytes. */
  linkTo?: string;
  /** A text file a dry run shows; `secret`: shown with its values hidden. */
  text?: 'plain' | 'secret';
}

/** Executables that are not CNI plugins (never copied into the CNI bin dir). */
const NOT_PLUGINS = new Set(['weftd', 'weft']);

/** Names of the CNI plugin executables weft builds. */
export function pluginNames(): string[] {
  return ENTRIES.map((e) => e.name).filter((n) => !NOT_PLUGINS.has(n));
}

/** The files of an install for `opts`; throws naming a missing executable or a plugin the conflist needs. */
export function planInstall(opts: InstallOptions): PlannedFile[] {
  if (opts.standaloneFile !== undefined) return planStandalone(opts, opts.standaloneFile);
  const files: PlannedFile[] = [];
  const read = (name: string): Uint8Array => {
    const p = join(opts.sourceDir, name);
    if (!existsSync(p)) throw new Error(`${p} is missing: build first (npm run build) or point --source at the built executables`);
    return readFileSync(p);
  };
  const plugins = pluginNames().filter((n) => existsSync(join(opts.sourceDir, n)));
  for (const name of plugins) files.push({ path: join(opts.binDir, name), data: read(name), mode: 0o755, what: `plugin ${name}` });
  const conflist = renderConflist(opts);
  for (const type of conflistTypes(conflist)) {
    if (!plugins.includes(type)) {
      throw new Error(`backend ${opts.backend} needs the plugin "${type}", which is not among the built executables in ${opts.sourceDir} (${plugins.join(', ')})`);
    }
  }
  files.push({ path: join(opts.confDir, opts.conflistName), data: Buffer.from(conflist), mode: 0o644, what: 'conflist', text: 'plain' });
  if (usesWeftd(opts.backend)) {
    files.push({ path: join(opts.agentDir, 'weftd'), data: read('weftd'), mode: 0o755, what: 'agent weftd' });
    files.push(...planWeftdConfig(opts, [join(opts.sourceDir, 'weftd')]));
  }
  return files;
}

/** The standalone install: the executable once as <binDir>/weft, every plugin name a hard link to it, weftd run from it by the unit. */
function planStandalone(opts: InstallOptions, file: string): PlannedFile[] {
  if (!existsSync(file)) throw new Error(`${file} is missing: build first (npm run build makes dist/sea/weft) or point --standalone at it`);
  const data = readFileSync(file);
  const exe = join(opts.binDir, 'weft');
  const files: PlannedFile[] = [{ path: exe, data, mode: 0o755, what: 'standalone weft' }];
  for (const name of pluginNames()) files.push({ path: join(opts.binDir, name), data, mode: 0o755, what: `plugin ${name} (hard link to weft)`, linkTo: exe });
  files.push({ path: join(opts.confDir, opts.conflistName), data: Buffer.from(renderConflist(opts)), mode: 0o644, what: 'conflist', text: 'plain' });
  if (usesWeftd(opts.backend)) files.push(...planWeftdConfig(opts, [file, 'weftd']));
  return files;
}

/**
 * weftd's configuration: net-conf.json (unless --net-conf names one, or etcd holds it), the 0600
 * environment file with the etcd password, the unit. `sourceWeftd` runs the weftd being installed,
 * asked whether it has the Kubernetes lease source before a unit that needs it is written.
 */
function planWeftdConfig(opts: InstallOptions, sourceWeftd: string[]): PlannedFile[] {
  if (opts.leaseSource.kind === 'kube') assertWeftdHasKube(sourceWeftd);
  const files: PlannedFile[] = [];
  const netConf = unitNetConfPath(opts);
  if (netConf !== undefined && opts.netConfFile === undefined) {
    files.push({ path: netConf, data: Buffer.from(renderNetConf(opts)), mode: 0o644, what: 'weftd net-conf', text: 'plain' });
  }
  const env = renderWeftdEnv(opts.leaseSource);
  if (env !== undefined) files.push({ path: weftdEnvPath(opts), data: Buffer.from(env), mode: 0o600, what: 'weftd secrets', text: 'secret' });
  files.push({ path: join(opts.unitDir, 'weftd.service'), data: Buffer.from(renderWeftdUnit(opts)), mode: 0o644, what: 'systemd unit', text: 'plain' });
  return files;
}
