// The DaemonSet's image, built locally by scripts/image.sh (podman, FROM scratch, nothing pulled)
// into a private podman store and saved (image.sh --save) as a docker archive that `ctr images import` loads. Runs
// podman in the root namespace's file system only (a private --root/--runroot, no network: --network=none).
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { run } from '../exec.ts';

const ROOT = join(import.meta.dirname, '..', '..');
/** The standalone executable scripts/image.sh puts into the image. */
export const SEA_WEFT = join(ROOT, 'dist', 'sea', 'weft');
/** The sandbox image scripts/pause-image.sh builds (the tag the upstream e2e tests run too). */
export const PAUSE_IMAGE = 'registry.k8s.io/pause:3.10';

/**
 * Runs scripts/`script`, one of the cached image builders that print their archive's path
 * (pause-image.sh, coredns-image.sh, agnhost-image.sh: instant once built); resolves with that path.
 */
export async function cachedImageArchive(script: string): Promise<string> {
  const r = await run(['bash', join(ROOT, 'scripts', script)], { timeoutMs: 300_000 });
  const out = r.stdout.trim().split('\n').pop() ?? '';
  if (r.code !== 0 || !existsSync(out)) throw new Error(`scripts/${script} failed (${r.code}): ${r.stderr.trim()}`);
  return out;
}

/** Builds image `tag` from dist/sea/weft and writes it to `out` (docker-archive); returns `out`. */
export async function buildWeftImageArchive(workDir: string, tag: string, out: string): Promise<string> {
  if (!existsSync(SEA_WEFT)) throw new Error(`${SEA_WEFT} is missing: run npm run build`);
  mkdirSync(workDir, { recursive: true });
  const dir = mkdtempSync(join(workDir, 'podman-'));
  try {
    const conf = join(dir, 'containers.conf');
    // File locks and a private tmp dir: the machine's SHM locks and /run/libpod are other runs'.
    writeFileSync(conf, ['[engine]', 'lock_type = "file"', 'events_logger = "file"', `events_logfile_path = ${JSON.stringify(join(dir, 'events.log'))}`,
      `tmp_dir = ${JSON.stringify(join(dir, 'tmp'))}`, ''].join('\n'));
    const q = (s: string): string => `'${s.replace(/'/g, `'"'"'`)}'`;
    const flags = ['--root', join(dir, 'root'), '--runroot', join(dir, 'runroot'), '--storage-driver', 'vfs', '--cgroup-manager=cgroupfs'];
    const wrapper = join(dir, 'podman');
    writeFileSync(wrapper, `#!/bin/sh\nCONTAINERS_CONF=${q(conf)} exec podman ${flags.map(q).join(' ')} "$@"\n`, { mode: 0o755 });
    // --save: the release tarball as users get it (docker archive + .sha256), checked here.
    const b = await run(['bash', join(ROOT, 'scripts', 'image.sh'), '--tag', tag, '--save', out], { env: { ...process.env, PODMAN: wrapper }, timeoutMs: 900_000 });
    if (b.code !== 0) throw new Error(`scripts/image.sh failed (${b.code}): ${b.stderr.trim()}`);
    const sum = await run(['sha256sum', '-c', `${basename(out)}.sha256`], { cwd: dirname(out) });
    if (sum.code !== 0) throw new Error(`${out}.sha256 does not match: ${sum.stdout}${sum.stderr}`);
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
