// `weft`, the npm bin (bundled as dist/bin/weft): wiring only; the commands live in cli/install/.
import { runWeftCli } from './install/cli.ts';

runWeftCli(process.argv.slice(2), { out: (s) => process.stdout.write(s), err: (s) => process.stderr.write(s) }).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`weft: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
