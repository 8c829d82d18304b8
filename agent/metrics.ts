// weftd's /metrics (Prometheus text exposition format 0.0.4) and /healthz over node:http on
// --metrics-addr. Counters and gauges only; a label set per sample where useful.
import type { Server } from 'node:http';
import { formatHttpDate } from '../lib/time/format.ts';

type Kind = 'counter' | 'gauge';

interface Family {
  help: string;
  kind: Kind;
  samples: Map<string, number>;
}

/** A small registry of named counters and gauges. */
export class Metrics {
  private readonly families = new Map<string, Family>();
  private readonly collectors: Array<() => void> = [];

  /** Registers a function run before each format(), to copy values kept elsewhere (e.g. the udp forwarder's counters). */
  addCollector(fn: () => void): void {
    this.collectors.push(fn);
  }

  /** Declares a metric (idempotent). */
  define(name: string, kind: Kind, help: string): void {
    if (!this.families.has(name)) this.families.set(name, { help, kind, samples: new Map() });
  }

  /** Adds `by` to a counter (or gauge). */
  inc(name: string, labels: Record<string, string> = {}, by = 1): void {
    const f = this.family(name);
    const k = formatLabels(labels);
    f.samples.set(k, (f.samples.get(k) ?? 0) + by);
  }

  /** Sets a gauge. */
  set(name: string, value: number, labels: Record<string, string> = {}): void {
    this.family(name).samples.set(formatLabels(labels), value);
  }

  /** Drops every sample of a family (a family whose label sets follow a table, rebuilt on each scrape). */
  clear(name: string): void {
    this.family(name).samples.clear();
  }

  /** Current value (tests and logs). */
  get(name: string, labels: Record<string, string> = {}): number {
    return this.family(name).samples.get(formatLabels(labels)) ?? 0;
  }

  private family(name: string): Family {
    const f = this.families.get(name);
    if (!f) throw new Error(`metric ${name} is not defined`);
    return f;
  }

  /** The Prometheus text format of every metric. */
  format(): string {
    for (const fn of this.collectors) fn();
    const lines: string[] = [];
    for (const [name, f] of this.families) {
      lines.push(`# HELP ${name} ${f.help}`, `# TYPE ${name} ${f.kind}`);
      if (f.samples.size === 0 && f.kind === 'counter') lines.push(`${name} 0`);
      for (const [labels, v] of f.samples) lines.push(`${name}${labels} ${v}`);
    }
    return `${lines.join('\n')}\n`;
  }
}

function formatLabels(labels: Record<string, string>): string {
  const parts = Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`);
  return parts.length ? `{${parts.join(',')}}` : '';
}

/** "127.0.0.1:9101" / ":9101" / "[::1]:9101" -> host and port; throws naming the flag. */
export function parseListenAddr(addr: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:]*)):([0-9]{1,5})$/.exec(addr);
  const port = Number(m?.[3]);
  if (!m || port > 65535) throw new Error(`--metrics-addr ${JSON.stringify(addr)} must be HOST:PORT`);
  return { host: m[1] ?? (m[2] || '0.0.0.0'), port };
}

/** Serves /metrics and /healthz (200 while `healthy()` is true, 503 otherwise); resolves once listening. */
export async function serveMetrics(addr: string, metrics: Metrics, healthy: () => { ok: boolean; detail: string }): Promise<Server> {
  const { host, port } = parseListenAddr(addr);
  // Loaded only when a listen address is given: node:http and its streams are about 3 MB of an idle
  // weftd's RSS, which a weftd without --metrics-addr/--healthz-port need not carry.
  const { createServer } = process.getBuiltinModule('node:http');
  const server = createServer((req, res) => {
    // node:http's own Date header goes through toUTCString (see lib/time/format.ts).
    res.sendDate = false;
    res.setHeader('date', formatHttpDate(Date.now()));
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
      res.end(metrics.format());
    } else if (path === '/healthz') {
      const h = healthy();
      res.writeHead(h.ok ? 200 : 503, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`${h.ok ? 'ok' : 'unhealthy'}: ${h.detail}\n`);
    } else {
      res.writeHead(404).end('not found\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => { server.off('error', reject); resolve(); });
  });
  // Keep-alive sockets of a scraper must not hold the process open after SIGTERM.
  server.unref();
  return server;
}
