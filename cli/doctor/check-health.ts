// Check "weftd": its /healthz and /metrics at --metrics-addr (node:http, 2 s timeout), read in the
// node's netns. Skipped without --metrics-addr: weftd serves them only when given that flag.
import { request } from 'node:http';
import { WEFTD_METRICS } from '../../agent/inspect.ts';
import type { CheckResult, Problem } from './problem.ts';

/** GET http://addr/path: status and body, or the error. */
export function httpGet(addr: string, path: string, timeoutMs = 2000): Promise<{ status: number; body: string } | { error: string }> {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(addr);
  const host = m?.[1] ?? (m?.[2] || '127.0.0.1');
  const connectHost = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '::1' : host;
  return new Promise((resolve) => {
    const req = request({ host: connectHost, port: Number(m?.[3] ?? 0), path, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    req.on('error', (e) => resolve({ error: e.message }));
    req.end();
  });
}

/** Prometheus text -> "name{labels}" -> value. */
export function parseMetrics(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?) (\S+)/.exec(line);
    if (m) out.set(m[1] as string, Number(m[2]));
  }
  return out;
}

/** Judges weftd's answers (pure): unreachable, unhealthy, route conflicts. `defaulted`: the address is the installed default, not given. */
export function judgeHealth(addr: string, healthz: { status: number; body: string } | { error: string }, metrics: Map<string, number> | null, defaulted = false): CheckResult {
  const check = 'weftd';
  const problems: Problem[] = [];
  const facts: Record<string, unknown> = { metricsAddr: addr };
  if ('error' in healthz) {
    const where = defaulted ? ' (the address weft install and the DaemonSet give weftd; pass --metrics-addr if yours serves elsewhere)' : '';
    problems.push({ check, detail: `weftd does not answer at http://${addr}/healthz (${healthz.error})${where}`, fix: 'systemctl status weftd; journalctl -u weftd -n 50 (is it running with this --metrics-addr?)' });
    return { check, problems, facts };
  }
  facts['healthz'] = healthz.body.trim();
  if (healthz.status !== 200) {
    problems.push({ check, detail: `weftd reports unhealthy (HTTP ${healthz.status}): ${healthz.body.trim()}`, fix: 'journalctl -u weftd -n 50 for the failing reconcile; the other checks below name what differs' });
  }
  if (metrics !== null) {
    const conflicts = metrics.get(WEFTD_METRICS.conflicts) ?? 0;
    facts['leases'] = metrics.get(WEFTD_METRICS.leases) ?? 0;
    if (conflicts > 0) problems.push({ check, detail: `weftd sees ${conflicts} route(s) to peer subnets that it did not create and leaves alone`, fix: 'see the peers check for which; delete those routes (ip route del <subnet>) so weftd can program its own' });
  }
  return { check, problems, facts };
}

/** weftd's /healthz answer and parsed /metrics (null when it did not answer them). */
export interface WeftdView {
  addr: string;
  /** The address is doctor's default, not weftd's known flag. */
  defaulted: boolean;
  healthz: { status: number; body: string } | { error: string };
  metrics: Map<string, number> | null;
}

/** Reads weftd at `addr` once (the weftd and peers checks both use it); undefined without an address. */
export async function readWeftd(addr: string | undefined, defaulted = false): Promise<WeftdView | undefined> {
  if (addr === undefined) return undefined;
  const healthz = await httpGet(addr, '/healthz');
  const m = 'error' in healthz ? null : await httpGet(addr, '/metrics');
  return { addr, defaulted, healthz, metrics: m !== null && !('error' in m) && m.status === 200 ? parseMetrics(m.body) : null };
}

/** Runs the check against what readWeftd read, or reports it skipped (`why`: the reason there is no address). */
export function checkHealth(w: WeftdView | undefined, why = 'no --metrics-addr (weftd serves /healthz only with it)'): CheckResult {
  if (w === undefined) return { check: 'weftd', problems: [], facts: {}, skipped: why };
  return judgeHealth(w.addr, w.healthz, w.metrics, w.defaulted);
}
