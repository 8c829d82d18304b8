// Helper of the benchmarks that write to the Kubernetes API (weftd's kube store, the side-by-side
// Service bench), run inside the API server's namespace (the bench process cannot reach the underlay):
// reads JSON lines {"warm"?: path, "reqs": [[method, path, body?, contentType?], ...]}, GETs `warm`
// first (the connection is up before timing starts), sends the requests through weft's own client
// with at most 32 in flight, and answers
// {"t0":<wall ms just before the first request>,"done":<wall ms once all are acknowledged>}.
import { createInterface } from 'node:readline';
import { KubeClient } from '../../agent/kube/client.ts';
import { resolveKubeConn } from '../../agent/kube/config.ts';

const kubeconfig = process.argv[2];
if (kubeconfig === undefined) throw new Error('usage: kube-writer.ts <kubeconfig>');
const client = new KubeClient(await resolveKubeConn({ kubeconfigFile: kubeconfig }), 120_000);
const IN_FLIGHT = 32;

/** One request: method, path, body, content type. */
export type KubeReq = [string, string, unknown?, string?];

/** Wall-clock milliseconds with performance.now()'s resolution (comparable across processes). */
function wallMs(): number {
  return performance.timeOrigin + performance.now();
}

async function handle(line: string): Promise<void> {
  const { warm, reqs } = JSON.parse(line) as { warm?: string; reqs: KubeReq[] };
  if (warm !== undefined) await client.call('GET', warm);
  const t0 = wallMs();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < reqs.length) {
      const [method, path, body, type] = reqs[next++] as KubeReq;
      await client.call(method, path, body, type);
    }
  };
  await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, reqs.length) }, worker));
  process.stdout.write(`${JSON.stringify({ t0, done: wallMs() })}\n`);
}

const rl = createInterface({ input: process.stdin });
let chain = Promise.resolve();
rl.on('line', (line) => { chain = chain.then(() => handle(line)).catch((e: unknown) => { process.stderr.write(`kube-writer: ${String(e)}\n`); process.exit(1); }); });
rl.on('close', () => { void chain.then(() => client.close()); });
