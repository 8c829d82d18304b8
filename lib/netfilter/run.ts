// Spawns nft (optionally through nsenter) synchronously, with node:child_process and not execa: it runs
// on the ADD path and inside withNetns windows, and execa costs 117 kB of bundle, 24 ms of CPU at
// start-up and 7.5 MiB of weftd's RSS (measured, docs/architecture.md "execa kept off the ADD path").
import { existsSync } from 'node:fs';
import { stallTimeoutMs, STALL_TIMEOUT_ENV } from '../cni/stall.ts';
import { NftError } from './errors.ts';
import { validateNetnsPath } from './validate.ts';
import type { NftRunOptions } from './types.ts';

const NFT_CANDIDATES = ['/usr/sbin/nft', '/sbin/nft', '/usr/bin/nft'];
const NSENTER_CANDIDATES = ['/usr/bin/nsenter', '/bin/nsenter', '/usr/sbin/nsenter'];
let cachedNft: string | undefined;

/** The nft binary: absolute paths first, because a runtime may exec plugins with a minimal PATH. */
export function findNft(): string {
  cachedNft ??= NFT_CANDIDATES.find((p) => existsSync(p)) ?? 'nft';
  return cachedNft;
}

function findNsenter(): string {
  return NSENTER_CANDIDATES.find((p) => existsSync(p)) ?? 'nsenter';
}

/** The file and argv that run `nft <args>` (through nsenter with opts.netnsPath): shared by the sync and async runners. */
export function nftCommand(args: readonly string[], opts: NftRunOptions = {}): [string, string[]] {
  const nft = opts.nftBinary ?? findNft();
  return opts.netnsPath === undefined
    ? [nft, [...args]]
    : [findNsenter(), [`--net=${validateNetnsPath(opts.netnsPath)}`, '--', nft, ...args]];
}

/** Output of a successful nft run. */
export interface NftOutput {
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `nft <args>` with `input` on stdin, in the calling thread's network namespace: a child forked
 * by the thread that did setns() starts in that namespace (checked on Node 20 / libuv: spawnSync
 * after setns on the main thread lands in the new netns). With `netnsPath`, runs under
 * `nsenter --net=<path>` instead. Throws NftError (kind spawn/timeout/failed) with stderr kept.
 */
export function runNft(args: readonly string[], input: string | undefined, opts: NftRunOptions = {}): NftOutput {
  const [file, argv] = nftCommand(args, opts);
  // Fetched at call time: importing node:child_process at the top pulls in net, dgram and streams
  // (about 5-10 ms of every start of a bundle that holds this module, measured), and the hot path never spawns.
  const { spawnSync } = process.getBuiltinModule('node:child_process');
  const timeout = opts.timeoutMs ?? stallTimeoutMs(process.env);
  const res = spawnSync(file, argv, {
    input: input ?? '',
    encoding: 'utf8',
    timeout,
    killSignal: 'SIGKILL', // a stalled nft may ignore SIGTERM
    maxBuffer: 256 * 1024 * 1024, // a listing of a large set must not be truncated
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const script = input ?? '';
  if (res.error !== undefined) {
    const timedOut = (res.error as NodeJS.ErrnoException).code === 'ETIMEDOUT';
    const what = timedOut ? `did not finish within ${timeout} ms (${STALL_TIMEOUT_ENV}) and was killed` : `could not be started: ${res.error.message}`;
    throw new NftError(timedOut ? 'timeout' : 'spawn', `nftables: ${file} ${what}`, {
      cause: res.error,
      script,
    });
  }
  const stderr = res.stderr ?? '';
  if (res.status !== 0) {
    const first = stderr.split('\n').find((l) => l.includes('Error')) ?? stderr.split('\n')[0] ?? '';
    throw new NftError('failed', `nftables: nft ${args.join(' ')} failed (exit ${String(res.status ?? res.signal)}): ${first.trim()}`, {
      exitStatus: res.status,
      stderr,
      script,
    });
  }
  return { stdout: res.stdout ?? '', stderr };
}
