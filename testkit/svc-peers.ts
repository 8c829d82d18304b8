// Servers and clients for Service tests, run with node inside pod and node namespaces the test made:
// a TCP+UDP server answering "<name> <peer address>", one-shot probes that report the errno of a
// failure (ECONNREFUSED vs a timeout), and a long-lived TCP flow that pings until it breaks.
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nsExec, type Topology } from './topology.ts';

const SERVER = `
const net = require('node:net'); const dgram = require('node:dgram');
const [name, tcpPorts, udpPort] = process.argv.slice(2);
const peer = (a) => String(a).replace(/^::ffff:/, '');
for (const p of tcpPorts.split(',')) net.createServer((s) => {
  s.write(name + ' ' + peer(s.remoteAddress) + '\\n');
  s.on('data', (d) => s.write(name + ' ' + d.toString()));
  s.on('error', () => {});
}).listen(Number(p), '::');
const u = dgram.createSocket({ type: 'udp6' });
u.on('message', (m, r) => u.send(name + ' ' + peer(r.address) + '\\n', r.port, r.address));
u.bind(Number(udpPort), '::');
`;

const PROBE = `
const net = require('node:net'); const dgram = require('node:dgram');
const [proto, host, port, ms, src] = process.argv.slice(2);
const done = (o) => { process.stdout.write(JSON.stringify(o)); process.exit(0); };
setTimeout(() => done({ ok: false, code: 'TIMEOUT' }), Number(ms));
if (proto === 'tcp') {
  const s = net.connect({ host, port: Number(port) });
  s.once('data', (d) => { done({ ok: true, reply: d.toString().trim() }); });
  s.once('error', (e) => done({ ok: false, code: e.code }));
} else {
  const u = dgram.createSocket(host.includes(':') ? 'udp6' : 'udp4');
  u.on('message', (m) => done({ ok: true, reply: m.toString().trim() }));
  u.on('error', (e) => done({ ok: false, code: e.code }));
  const go = () => u.send('x', Number(port), host);
  if (src !== undefined && src !== '') u.bind(Number(src), go); else go();
}
`;

const FLOW = `
const net = require('node:net');
const [host, port] = process.argv.slice(2);
let n = 0; let pending = false;
const s = net.connect({ host, port: Number(port) });
s.setNoDelay(true);
let first = true;
s.on('data', (d) => { if (first) { first = false; process.stdout.write('hello ' + d.toString()); } else { pending = false; n++; process.stdout.write('ok ' + n + '\\n'); } });
s.on('error', (e) => { process.stdout.write('err ' + e.code + '\\n'); process.exit(1); });
s.on('close', () => { process.stdout.write('closed\\n'); process.exit(1); });
setInterval(() => { if (pending) { process.stdout.write('stall\\n'); } pending = true; s.write('ping\\n'); }, 200);
`;

/** The result of one probe. */
export interface ProbeResult {
  ok: boolean;
  /** The server's answer: "<pod name> <client address as the server saw it>". */
  reply?: string;
  /** errno code of a failure (ECONNREFUSED, EHOSTUNREACH, ...) or TIMEOUT. */
  code?: string;
}

/** Writes the scripts into the topology's directory once; returns their paths. */
function scripts(topo: Topology): { server: string; probe: string; flow: string } {
  const s = { server: join(topo.dir, 'svc-server.cjs'), probe: join(topo.dir, 'svc-probe.cjs'), flow: join(topo.dir, 'svc-flow.cjs') };
  writeFileSync(s.server, SERVER);
  writeFileSync(s.probe, PROBE);
  writeFileSync(s.flow, FLOW);
  return s;
}

/** Service test peers of one topology. */
export class SvcPeers {
  private readonly s: { server: string; probe: string; flow: string };

  constructor(private readonly topo: Topology) {
    this.s = scripts(topo);
  }

  /** Starts the server in `netns` (TCP on each of tcpPorts, UDP on udpPort), answering as `name`, checked at `ip` (pods have no loopback up); killed by the topology's destroy. */
  async startServer(netns: string, name: string, tcpPorts: number[], udpPort: number, ip: string): Promise<ChildProcess> {
    const p = this.topo.spawnIn(netns, [process.execPath, this.s.server, name, tcpPorts.join(','), String(udpPort)]);
    for (let i = 0; i < 100; i++) {
      const r = await this.probe(netns, 'tcp', ip, tcpPorts[0] ?? 0, 500);
      if (r.ok) return p;
      await new Promise((res) => setTimeout(res, 50));
    }
    throw new Error(`server in ${netns} did not start`);
  }

  /** One connection (tcp) or datagram (udp, from source port `srcPort` when given) from `netns`; never throws. */
  async probe(netns: string, proto: 'tcp' | 'udp', host: string, port: number, timeoutMs = 2000, srcPort?: number): Promise<ProbeResult> {
    const r = await nsExec(netns, [process.execPath, this.s.probe, proto, host, String(port), String(timeoutMs), ...(srcPort !== undefined ? [String(srcPort)] : [])], { timeoutMs: timeoutMs + 10_000 });
    try {
      return JSON.parse(r.stdout) as ProbeResult;
    } catch {
      return { ok: false, code: `probe failed: ${r.stderr.slice(0, 200)}` };
    }
  }

  /** The pod names answering `n` probes (which endpoints a Service spreads to). */
  async names(netns: string, proto: 'tcp' | 'udp', host: string, port: number, n: number): Promise<string[]> {
    const out: string[] = [];
    for (let i = 0; i < n; i++) {
      const r = await this.probe(netns, proto, host, port);
      out.push(r.ok ? (r.reply ?? '').split(' ')[0] ?? '' : `!${r.code ?? ''}`);
    }
    return out;
  }

  /** A long-lived TCP flow from `netns` pinging every 200 ms; `oks()` counts answers, `broken()` says whether it failed. */
  startFlow(netns: string, host: string, port: number): { oks(): number; output(): string; broken(): boolean; stop(): void } {
    const p = this.topo.spawnIn(netns, [process.execPath, this.s.flow, host, String(port)]);
    let out = '';
    p.stdout?.on('data', (d: Buffer) => { out += d.toString(); });
    return {
      oks: () => (out.match(/^ok \d+$/gm) ?? []).length,
      output: () => out,
      broken: () => p.exitCode !== null || /^(err|closed)/m.test(out),
      stop: () => { if (p.exitCode === null) p.kill('SIGKILL'); },
    };
  }
}
