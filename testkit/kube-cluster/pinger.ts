// Continuous pings between pods while something else happens (a DaemonSet rollout): a busybox ping
// started in the background inside a pod by `kubectl exec`, writing to a file in the pod, then
// stopped and read back. The longest gap is computed from the sequence numbers that came back.
import type { KubeCluster } from './cluster.ts';

/** How often the pingers send (busybox ping -i). */
export const PING_INTERVAL_MS = 200;

/** What one pinger saw. */
export interface PingReport {
  from: string;
  to: string;
  sent: number;
  received: number;
  /** Longest time between two consecutive replies (ms; sequence-number based). */
  longestGapMs: number;
}

/** Starts `ping -i 0.2 <ip>` in the background in `pod` (its output in /tmp/weft-ping.log there). */
export async function startPinger(k: KubeCluster, namespace: string, pod: string, ip: string): Promise<void> {
  const script = `rm -f /tmp/weft-ping.log; ping -i ${PING_INTERVAL_MS / 1000} ${ip} >/tmp/weft-ping.log 2>&1 </dev/null & echo $! >/tmp/weft-ping.pid`;
  await k.mustKubectl(['-n', namespace, 'exec', pod, '--', 'sh', '-c', script]);
}

/** Stops the pinger of `pod` and reports what came back. */
export async function stopPinger(k: KubeCluster, namespace: string, pod: string, ip: string): Promise<PingReport> {
  const out = await k.mustKubectl(['-n', namespace, 'exec', pod, '--', 'sh', '-c', 'kill -INT $(cat /tmp/weft-ping.pid); sleep 1; cat /tmp/weft-ping.log']);
  return { from: pod, to: ip, ...parsePingLog(out, PING_INTERVAL_MS) };
}

/** Sent/received counts and the longest reply gap from busybox ping's output ("seq=N" lines, "N packets transmitted"). */
export function parsePingLog(text: string, intervalMs: number): { sent: number; received: number; longestGapMs: number } {
  const seqs = [...text.matchAll(/seq=(\d+)/g)].map((m) => Number(m[1])).sort((a, b) => a - b);
  const sentMatch = /(\d+) packets transmitted/.exec(text);
  const sent = sentMatch ? Number(sentMatch[1]) : (seqs.at(-1) ?? -1) + 1;
  let gap = 0;
  for (let i = 1; i < seqs.length; i++) gap = Math.max(gap, ((seqs[i] ?? 0) - (seqs[i - 1] ?? 0)) * intervalMs);
  return { sent, received: new Set(seqs).size, longestGapMs: seqs.length > 1 ? gap : Infinity };
}

/** "web-a -> 10.244.1.3: 412/415 replies, longest gap 400 ms" */
export function formatPingReport(r: PingReport): string {
  return `${r.from} -> ${r.to}: ${r.received}/${r.sent} replies, longest gap ${r.longestGapMs} ms`;
}
