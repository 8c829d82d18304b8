// The `weft` program (the npm bin dist/bin/weft, and the standalone file started as `weft`): its
// subcommands `weft install [--uninstall]`, `weft uninstall` (cli/install/) and `weft doctor`
// (cli/doctor/), and how an error becomes an exit code: 0 done, 1 failed, 2 bad option. Human-readable
// lines by default, one JSON document with --json. Runs in the caller's namespaces.
import { Command, CommanderError } from 'commander';
import { doctorArgv } from './doctor/argv.ts';
import { doctorCommand, runDoctorCommand } from './doctor/command.ts';
import { DoctorOptionError } from './doctor/options.ts';
import { installCommand, uninstallCommand } from './install/command.ts';
import { InstallOptionError } from './install/options.ts';
import { WEFT_VERSION } from '../lib/version.ts';

/** Where the CLI writes; injected so tests can capture it. */
export interface CliIo {
  out: (s: string) => void;
  err: (s: string) => void;
}

/** Builds the commander program; actions set `exit`. */
function program(io: CliIo, argv1: string | undefined, setExit: (code: number) => void): Command {
  const output = { writeOut: io.out, writeErr: io.err };
  const root = new Command('weft').description('weft CNI plugins: installation and diagnosis').version(`weft ${WEFT_VERSION}`, '-V, --version')
    .exitOverride().configureOutput(output);
  // Every subcommand throws instead of exiting, so that a usage error is exit 2 in each of them.
  const subs = [installCommand(io, argv1, setExit), uninstallCommand(io, setExit), doctorCommand(async (f) => setExit(await runDoctorCommand(f, io)))];
  for (const sub of subs) root.addCommand(sub.exitOverride().configureOutput(output));
  return root;
}

/** Runs the CLI on `args` (without node and script); resolves with the exit code. */
export async function runWeftCli(args: string[], io: CliIo, argv1 = process.argv[1]): Promise<number> {
  let exit = 0;
  try {
    await program(io, argv1, (c) => (exit = c)).parseAsync(args[0] === 'doctor' ? ['doctor', ...doctorArgv(args.slice(1), process.env)] : args, { from: 'user' });
    return exit;
  } catch (e) {
    if (e instanceof CommanderError) return e.exitCode === 0 ? 0 : 2;
    if (e instanceof InstallOptionError || e instanceof DoctorOptionError) {
      io.err(`weft: ${e.message}\n`);
      return 2;
    }
    io.err(`weft: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  }
}
