// `weft`, the npm bin (bundled as dist/bin/weft): wiring only; the program is cli/program.ts.
import { runWeftCli } from './program.ts';

runWeftCli(process.argv.slice(2), { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) }).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`weft: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
