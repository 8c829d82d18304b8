// Helper of the weftd benchmark's kube store, run inside the API server's namespace (the bench
// process cannot reach the underlay): reads JSON lines {"nodes":[<v1 Node>,...]} on stdin, creates
// them through the API (weft's own client, at most 32 requests in flight) and answers
// {"t0":<wall ms taken just before the first create>,"done":<wall ms once all are acknowledged>}.
import { createInterface } from 'node:readline';
import { KubeClient } from '../../agent/kube/client.ts';
import { resolveKubeConn } from '../../agent/kube/config.ts';

const kubeconfig = process.argv[2];
if (kubeconfig === undefined) throw new Error('usage: kube-writer.ts <kubeconfig>');
const client = new KubeClient(await resolveKubeConn({ kubeconfigFile: kubeconfig }), 60_000);
const IN_FLIGHT = 32;

/** Wall-clock milliseconds with performance.now()'s resolution (comparable across processes). */
function wallMs(): number {
  return performance.timeOrigin + performance.now();
}

async function handle(line: string): Promise<void> {
  const req = JSON.parse(line) as { nodes: unknown[] };
  await client.call('GET', '/api/v1/nodes?limit=1'); // the connection is up before timing starts
  const t0 = wallMs();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < req.nodes.length) await client.call('POST', '/api/v1/nodes', req.nodes[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, req.nodes.length) }, worker));
  process.stdout.write(`${JSON.stringify({ t0, done: wallMs() })}\n`);
}

const rl = createInterface({ input: process.stdin });
let chain = Promise.resolve();
rl.on('line', (line) => { chain = chain.then(() => handle(line)); });
rl.on('close', () => { void chain.then(() => client.close()); });
