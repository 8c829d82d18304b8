// healthCheckNodePort for externalTrafficPolicy Local LoadBalancers, answered as kube-proxy answers it
// (pkg/proxy/healthcheck): 200 with local endpoints, 503 without, a JSON body; one HTTP server per
// port in weftd's netns, started and stopped as Services come and go.
import type { Server } from 'node:http';
import type { AgentLog } from '../log.ts';
import type { ServicePortUnit } from './model.ts';

interface Entry {
  port: number;
  namespace: string;
  name: string;
  local: number;
}

/** The health-check servers of this node. */
export class HealthChecks {
  private readonly bySvc = new Map<string, Entry>();
  private readonly servers = new Map<number, Server>();

  constructor(private readonly log: AgentLog, private readonly host = '0.0.0.0') {}

  /** Follows the units of the Services a sync touched (an empty list: the Service is gone). */
  update(touched: ReadonlyMap<string, readonly ServicePortUnit[]>): void {
    for (const [key, units] of touched) {
      const port = units.find((u) => u.healthCheckNodePort !== undefined)?.healthCheckNodePort;
      if (port === undefined) {
        this.bySvc.delete(key);
        continue;
      }
      const [namespace = '', name = ''] = key.split('/');
      const local = new Set(units.flatMap((u) => u.external.filter((b) => b.local).map((b) => b.ip))).size;
      this.bySvc.set(key, { port, namespace, name, local });
    }
    const wanted = new Set([...this.bySvc.values()].map((e) => e.port));
    for (const [port, s] of this.servers) if (!wanted.has(port)) { s.close(); this.servers.delete(port); }
    for (const port of wanted) if (!this.servers.has(port)) this.listen(port);
  }

  private entry(port: number): Entry | undefined {
    for (const e of this.bySvc.values()) if (e.port === port) return e;
    return undefined;
  }

  private listen(port: number): void {
    const { createServer } = process.getBuiltinModule('node:http');
    const server = createServer((_req, res) => {
      const e = this.entry(port);
      const local = e?.local ?? 0;
      res.writeHead(local > 0 ? 200 : 503, { 'content-type': 'application/json', 'x-content-type-options': 'nosniff', 'x-load-balancing-endpoint-weight': String(local) });
      res.end(JSON.stringify({ service: { namespace: e?.namespace ?? '', name: e?.name ?? '' }, localEndpoints: local, serviceProxyHealthy: true }));
    });
    server.on('error', (err) => this.log.warn('health check server failed', { port, error: err }));
    server.listen(port, this.host);
    server.unref();
    this.servers.set(port, server);
  }

  /** Closes every server. */
  stop(): void {
    for (const s of this.servers.values()) s.close();
    this.servers.clear();
  }
}
