// The in-process fuzz worker: started by the test INSIDE a node namespace the test created
// (`ip netns exec <node> node --import tsx test/fuzz/worker.ts`), it imports the plugin objects and
// runs each case through runPlugin, thousands per minute. It refuses to start in the test runner's
// own namespace (the machine's root netns), since a valid bridge ADD would then change the host.
// Protocol: one JSON request per stdin line; one "@@weft-fuzz@@ <json>" reply per line on stdout, so
// anything else a plugin prints on stdout is visible as a stray line.
import { statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { runPlugin } from '../../lib/cni/skel.ts';
import type { Plugin } from '../../lib/cni/plugin.ts';
import { REPLY_MARK, type WorkerReply, type WorkerRequest } from './protocol.ts';
import { selectedTargets } from './targets.ts';

function netnsId(path: string): string {
  const st = statSync(path);
  return `${st.dev}:${st.ino}`;
}

/** Exits with an explanation unless this thread's netns differs from the runner's (given by env). */
function refuseRunnerNetns(): void {
  const runner = process.env['WEFT_FUZZ_RUNNER_NETNS'];
  if (runner === undefined || runner === '') {
    process.stderr.write('fuzz worker: WEFT_FUZZ_RUNNER_NETNS is not set; refusing to run plugins\n');
    process.exit(2);
  }
  if (netnsId('/proc/thread-self/ns/net') === runner) {
    process.stderr.write('fuzz worker: running in the test runner\'s network namespace; refusing (start it with ip netns exec)\n');
    process.exit(2);
  }
}

function send(r: WorkerReply): void {
  process.stdout.write(`${REPLY_MARK}${JSON.stringify(r)}\n`);
}

async function main(): Promise<void> {
  refuseRunnerNetns();
  const plugins = new Map<string, Plugin>();
  for (const t of selectedTargets()) plugins.set(t.name, await t.load());
  const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
  send({ id: 'ready', stdout: '', stderr: '', exitCode: 0, ms: 0 });
  for await (const line of rl) {
    if (line.trim() === '') continue;
    const req = JSON.parse(line) as WorkerRequest;
    const plugin = plugins.get(req.plugin);
    const t0 = performance.now();
    if (plugin === undefined) {
      send({ id: req.id, stdout: '', stderr: '', exitCode: -1, ms: 0, threw: `unknown plugin ${req.plugin}` });
      continue;
    }
    try {
      const out = await runPlugin(plugin, { env: req.env, stdin: Buffer.from(req.stdin, 'base64') });
      send({ id: req.id, stdout: out.stdout, stderr: out.stderr, exitCode: out.exitCode, ms: performance.now() - t0 });
    } catch (e) {
      send({ id: req.id, stdout: '', stderr: '', exitCode: -1, ms: performance.now() - t0, threw: (e as Error).stack ?? String(e) });
    }
  }
}

process.on('unhandledRejection', (e) => {
  send({ id: 'unhandled', stdout: '', stderr: '', exitCode: -1, ms: 0, threw: `unhandled rejection: ${(e as Error).stack ?? String(e)}` });
});

await main();
