// Connectivity and throughput probes between namespaces of a simulated cluster: ping, TCP
// throughput with iperf3, RTT. Only ever addresses inside the test's own namespaces.
import { nsExec } from './topology.ts';

/** One ICMP echo from a namespace to an address; true when a reply came back within the wait. */
export async function canPing(fromNetns: string, toIp: string, waitS = 1, tries = 3): Promise<boolean> {
  for (let i = 0; i < tries; i++) {
    const r = await nsExec(fromNetns, ['ping', '-c', '1', '-W', String(waitS), '-n', '-q', toIp]);
    if (r.code === 0) return true;
  }
  return false;
}

export interface Probe {
  from: string;
  to: string;
  toIp: string;
  fromNetns: string;
}

/** Pings every probe, a few at a time; returns the probes with their outcome. */
export async function pingMatrix(probes: Probe[], concurrency = 8, onDone?: () => void): Promise<Array<Probe & { ok: boolean }>> {
  const out: Array<Probe & { ok: boolean }> = new Array<Probe & { ok: boolean }>(probes.length);
  let next = 0;
  async function worker(): Promise<void> {
    while (next < probes.length) {
      const i = next++;
      const p = probes[i];
      if (p === undefined) continue;
      out[i] = { ...p, ok: await canPing(p.fromNetns, p.toIp) };
      onDone?.();
    }
  }
  await Promise.all(Array.from({ length: concurrency }, () => worker()));
  return out;
}

/** Median-free average RTT in ms over `count` fast pings (root may use a 10 ms interval). */
export async function rttMs(fromNetns: string, toIp: string, count = 20): Promise<number> {
  const r = await nsExec(fromNetns, ['ping', '-n', '-q', '-c', String(count), '-i', '0.01', '-W', '1', toIp]);
  const m = /= [\d.]+\/([\d.]+)\//.exec(r.stdout);
  if (r.code !== 0 || m?.[1] === undefined) throw new Error(`ping ${toIp} from ${fromNetns} failed: ${r.stdout}${r.stderr}`);
  return Number(m[1]);
}

/** Single-stream TCP throughput in Gbit/s from client to server namespace (iperf3, `seconds` long). */
export async function tcpGbps(clientNetns: string, serverNetns: string, serverIp: string, seconds = 3): Promise<number> {
  const port = String(5201 + Math.floor(Math.random() * 1000));
  const server = nsExec(serverNetns, ['iperf3', '-s', '-1', '-p', port], { timeoutMs: (seconds + 20) * 1000 });
  // A client that connects while the one-shot server is still starting can hang until the server
  // is killed (seen with iperf3 3.12), so wait until the port is really listening, then connect once.
  for (let i = 0; ; i++) {
    const ss = await nsExec(serverNetns, ['ss', '-Hltn', `sport = :${port}`]);
    if (ss.stdout.trim() !== '') break;
    if (i > 100) throw new Error(`iperf3 server in ${serverNetns} never listened on ${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const c = await nsExec(clientNetns, ['iperf3', '-c', serverIp, '-p', port, '-t', String(seconds), '-J'], { timeoutMs: (seconds + 15) * 1000 });
  await server;
  const j = (c.code === 0 ? JSON.parse(c.stdout) : {}) as { end?: { sum_received?: { bits_per_second?: number } } };
  const bps = j.end?.sum_received?.bits_per_second ?? 0;
  if (c.code !== 0 || bps <= 0) throw new Error(`iperf3 ${clientNetns} -> ${serverIp} failed (${String(c.code)}): ${(c.stdout + c.stderr).slice(0, 400)}`);
  return bps / 1e9;
}
