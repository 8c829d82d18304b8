// iperf3 TCP runs (one stream or several in parallel) between two network namespaces, shared by the data-plane benches
// (dataplane.ts: vxlan/host-gw vs hand-built; udp.ts: udp vs vxlan).
import { nsExec } from '../../testkit/topology.ts';

/** Measures Gbit/s between namespaces; each bench keeps its own duration and port range. */
export interface Iperf {
  /** One iperf3 run client -> server (runs in `server` and `client` netns) with `streams` parallel streams (-P), Gbit/s received in total. */
  gbps(client: string, server: string, serverIp: string, streams?: number): Promise<number>;
}

/**
 * An iperf3 runner: `seconds` per run (the first second more, omitted: slow start), ports taken in
 * turn from `firstPort`. The server is polled until it listens, so a client never races it; a run
 * that moved no data is retried (twice).
 */
export function createIperf(seconds: number, firstPort: number): Iperf {
  let nextPort = firstPort;
  return {
    async gbps(client, server, serverIp, streams = 1) {
      for (let attempt = 0; attempt < 3; attempt++) {
        const port = String(nextPort++);
        const srv = nsExec(server, ['iperf3', '-s', '-1', '-p', port], { timeoutMs: (seconds + 20) * 1000 });
        for (let i = 0; i < 50; i++) {
          if ((await nsExec(server, ['ss', '-Htln', `sport = :${port}`])).stdout.trim() !== '') break;
          await new Promise((r) => setTimeout(r, 50));
        }
        const r = await nsExec(client, ['iperf3', '-c', serverIp, '-p', port, '-t', String(seconds), '-O', '1', '-P', String(streams), '-J'], { timeoutMs: (seconds + 15) * 1000 });
        await srv;
        try {
          const bps = (JSON.parse(r.stdout) as { end?: { sum_received?: { bits_per_second?: number } } }).end?.sum_received?.bits_per_second ?? 0;
          if (r.code === 0 && bps > 0) return bps / 1e9;
        } catch { /* not JSON: retry */ }
        process.stderr.write(`  iperf3 ${client} -> ${serverIp} attempt ${attempt + 1} moved no data: ${r.stderr.slice(0, 200)}\n`);
      }
      throw new Error(`iperf3 ${client} -> ${serverIp} failed three times`);
    },
  };
}
