// Entry point of dist/bin/weftd: flags, start, and SIGTERM/SIGINT handling (wiring only).
import { CommanderError } from 'commander';
import { flanneldArgv } from './flanneld-argv.ts';
import { normalizeWeftdFlags, weftdCommand, type RawFlags } from './flags.ts';
import { CONTROLLER_YOUNG_MIB, capYoungGeneration, controllerMemoryFlags, setMemoryFlags, setV8Flags } from './memory.ts';
import { Weftd } from './weftd.ts';
import { isoNow } from '../lib/time/format.ts';
import { WEFT_VERSION } from '../lib/version.ts';

// Before any code gets hot (see memory.ts).
const memoryFlags = setMemoryFlags();

// grpc-js (etcd3) sets an IP address as TLS server name, which Node reports as a deprecation on
// stderr: weftd's stderr is its JSON log, and the warning is about a dependency, not the user's setup.
process.noDeprecation = true;

async function main(): Promise<void> {
  // exitOverride: commander throws instead of exiting 1, so a usage error exits 2 as weft's do.
  const cmd = weftdCommand(`weftd ${WEFT_VERSION}`).exitOverride();
  let opts;
  try {
    // flanneld's syntax and FLANNELD_* environment, so that a flanneld unit runs weftd unchanged.
    cmd.parse(flanneldArgv(process.argv.slice(2), process.env), { from: 'user' });
    opts = normalizeWeftdFlags(cmd.opts<RawFlags>());
    // Once the flags say which controllers run, before any of them allocates.
    const young = controllerMemoryFlags(opts, memoryFlags);
    setV8Flags(young);
    if (young.length > 0) capYoungGeneration(CONTROLLER_YOUNG_MIB);
  } catch (e) {
    // commander printed its own message (or the help or version, exit 0).
    if (e instanceof CommanderError) process.exit(e.exitCode === 0 ? 0 : 2);
    process.stderr.write(`weftd: ${(e as Error).message}\n`);
    process.exit(2);
  }
  const d = await Weftd.start(opts);
  let stopping = false;
  const stop = (sig: string): void => {
    if (stopping) return;
    stopping = true;
    opts.log.info('stopping; data plane and lease left in place', { signal: sig });
    // A store that cannot close (etcd unreachable) must not keep a stopping weftd alive.
    setTimeout(() => {
      opts.log.warn('stop took longer than 5 s; exiting anyway');
      process.exit(0);
    }, 5000).unref();
    d.stop().then(() => process.exit(0), (e: unknown) => {
      opts.log.error('stop failed', { error: e });
      process.exit(1);
    });
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // The lease store's timers keep the process alive; nothing else is needed here.
}

main().catch((e: unknown) => {
  process.stderr.write(`${JSON.stringify({ ts: isoNow(), level: 'error', msg: 'weftd failed to start', error: e instanceof Error ? e.message : String(e) })}\n`);
  process.exit(1);
});
