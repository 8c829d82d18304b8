// Helper of the weftd benchmark, run inside the etcd namespace (the bench process cannot reach
// the underlay): reads JSON lines {"puts":[[key,value],...]} on stdin, writes them concurrently and
// answers {"t0":<wall ms, sub-ms precision, taken just before the first put>} once all are done.
import { createInterface } from 'node:readline';
import { Etcd3 } from 'etcd3';

const url = process.argv[2];
if (url === undefined) throw new Error('usage: etcd-writer.ts <etcd url>');
const client = new Etcd3({ hosts: url });

/** Wall-clock milliseconds with performance.now()'s resolution (comparable across processes). */
function wallMs(): number {
  return performance.timeOrigin + performance.now();
}

async function handle(line: string): Promise<void> {
  const req = JSON.parse(line) as { puts: Array<[string, string]> };
  await client.get('warm-up').string(); // the connection is up before timing starts
  const t0 = wallMs();
  await Promise.all(req.puts.map(([k, v]) => client.put(k).value(v).exec()));
  process.stdout.write(`${JSON.stringify({ t0, done: wallMs() })}\n`);
}

const rl = createInterface({ input: process.stdin });
let chain = Promise.resolve();
rl.on('line', (line) => { chain = chain.then(() => handle(line)); });
rl.on('close', () => { void chain.then(() => client.close()); });
