// A node namespace (the plugin's "host") with a bridge, a client namespace on the node's uplink and
// pod namespaces wired to the bridge by hand; portmap's handlers run in-process inside the node netns.
import { spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CmdArgs } from '../../../../lib/cni/plugin.ts';
import { parseResult } from '../../../../lib/cni/result-parse.ts';
import type { Result } from '../../../../lib/cni/types.ts';
import { openNetns, withNetns } from '../../../../lib/netns/index.ts';
import { createTestNetns, run, type TestNetns, inNetns, spawnInNetns } from '../../../../testkit/netns.ts';

export const NODE4 = '192.0.2.1';
export const NODE6 = 'fd00:2::1';
export const CLIENT4 = '192.0.2.2';
export const BRIDGE4 = '10.99.0.1';
export const BRIDGE6 = 'fd00:99::1';
const ROOT = join(import.meta.dirname, '..', '..', '..', '..');

/** One pod: its namespace, addresses and the result a bridge plugin would have returned. */
export interface Pod {
  ns: TestNetns;
  index: number;
  ip4: string;
  ip6: string;
  containerId: string;
  result: Result;
}

async function ok(cmd: string[]): Promise<void> {
  const r = await run(cmd);
  if (r.code !== 0) throw new Error(`${cmd.join(' ')} failed (${r.code}): ${r.stderr.trim()}`);
}

/** Makes gen/validators/portmap.js when the tree was never built (the config module imports it). */
export function ensureValidators(): void {
  if (existsSync(join(ROOT, 'gen', 'validators', 'portmap.js'))) return;
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'gen-validators.ts')], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`gen-validators failed: ${r.stderr}`);
}

/** The node, a client on the node's uplink, pods on bridge `br0`; removed by destroy(). */
export class PortmapLab {
  readonly pods: Pod[] = [];
  private readonly servers: ChildProcess[] = [];
  private readonly dir = mkdtempSync(join(tmpdir(), 'weft-t-portmap-'));

  private constructor(
    readonly node: TestNetns,
    readonly client: TestNetns,
  ) {}

  /**
   * `brNetfilter`: whether bridged IPv4/IPv6 frames traverse netfilter in the node netns
   * (net.bridge.bridge-nf-call-ip{,6}tables, per netns since Linux 5.3; 1 whenever br_netfilter is
   * loaded, as on most Kubernetes nodes). Both must work: hairpin then takes different kernel paths.
   */
  static async create(opts: { brNetfilter: boolean }): Promise<PortmapLab> {
    ensureValidators();
    const lab = new PortmapLab(await createTestNetns('weft-t-pmn'), await createTestNetns('weft-t-pmc'));
    const n = lab.node.name;
    const c = lab.client.name;
    await ok(['ip', '-n', n, 'link', 'set', 'lo', 'up']);
    await ok(['ip', '-n', c, 'link', 'set', 'lo', 'up']);
    await ok(['ip', '-n', n, 'link', 'add', 'eth0', 'type', 'veth', 'peer', 'name', 'eth0', 'netns', c]);
    await ok(['ip', '-n', n, 'addr', 'add', `${NODE4}/24`, 'dev', 'eth0']);
    await ok(['ip', '-n', n, 'addr', 'add', `${NODE6}/64`, 'dev', 'eth0', 'nodad']);
    await ok(['ip', '-n', c, 'addr', 'add', `${CLIENT4}/24`, 'dev', 'eth0']);
    await ok(['ip', '-n', c, 'addr', 'add', 'fd00:2::2/64', 'dev', 'eth0', 'nodad']);
    await ok(['ip', '-n', n, 'link', 'set', 'eth0', 'up']);
    await ok(['ip', '-n', c, 'link', 'set', 'eth0', 'up']);
    await ok(['ip', '-n', n, 'link', 'add', 'br0', 'type', 'bridge']);
    await ok(['ip', '-n', n, 'addr', 'add', `${BRIDGE4}/24`, 'dev', 'br0']);
    await ok(['ip', '-n', n, 'addr', 'add', `${BRIDGE6}/64`, 'dev', 'br0', 'nodad']);
    await ok(['ip', '-n', n, 'link', 'set', 'br0', 'up']);
    // The client routes the pod subnet via the node, so pods can reach it (forwarded-traffic checks).
    await ok(['ip', '-n', c, 'route', 'add', '10.99.0.0/24', 'via', NODE4]);
    await ok(inNetns(n, ['sysctl', '-qw', 'net.ipv4.ip_forward=1', 'net.ipv6.conf.all.forwarding=1']));
    const brnf = opts.brNetfilter ? '1' : '0';
    if (existsSync('/proc/sys/net/bridge')) {
      await ok(inNetns(n, ['sysctl', '-qw', `net.bridge.bridge-nf-call-iptables=${brnf}`, `net.bridge.bridge-nf-call-ip6tables=${brnf}`]));
    }
    return lab;
  }

  /** Adds pod `index` (10.99.0.<10+index>, fd00:99::<10+index>) behind a veth on br0. */
  async addPod(index: number): Promise<Pod> {
    const ns = await createTestNetns('weft-t-pmp');
    const n = this.node.name;
    const host = `vp${index}`;
    const ip4 = `10.99.0.${10 + index}`;
    const ip6 = `fd00:99::${(10 + index).toString(16)}`;
    await ok(['ip', '-n', ns.name, 'link', 'set', 'lo', 'up']);
    await ok(['ip', '-n', n, 'link', 'add', host, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns.name]);
    await ok(['ip', '-n', n, 'link', 'set', host, 'master', 'br0', 'up']);
    // hairpinMode, as flannel's conflist sets it on the bridge plugin: with br_netfilter loaded
    // (bridge-nf-call-ip6tables=1) a DNATed hairpin frame is bridged back out the port it came in on.
    await ok(['ip', '-n', n, 'link', 'set', host, 'type', 'bridge_slave', 'hairpin', 'on']);
    await ok(['ip', '-n', ns.name, 'addr', 'add', `${ip4}/24`, 'dev', 'eth0']);
    await ok(['ip', '-n', ns.name, 'addr', 'add', `${ip6}/64`, 'dev', 'eth0', 'nodad']);
    await ok(['ip', '-n', ns.name, 'link', 'set', 'eth0', 'up']);
    await ok(['ip', '-n', ns.name, 'route', 'add', 'default', 'via', BRIDGE4]);
    await ok(['ip', '-n', ns.name, '-6', 'route', 'add', 'default', 'via', BRIDGE6]);
    const result = parseResult({
      cniVersion: '1.0.0',
      interfaces: [{ name: 'br0', mac: '02:00:00:00:00:01' }, { name: host, mac: '02:00:00:00:00:02' }, { name: 'eth0', mac: '02:00:00:00:00:03', sandbox: ns.path }],
      ips: [
        { address: `${ip4}/24`, gateway: BRIDGE4, interface: 2 },
        { address: `${ip6}/64`, gateway: BRIDGE6, interface: 2 },
      ],
    });
    const pod: Pod = { ns, index, ip4, ip6, containerId: `ctr-${index}-${ns.name.slice(-6)}`, result };
    this.pods.push(pod);
    return pod;
  }

  /** Serves HTTP on [::]:`port` in namespace `ns` (busybox httpd), answering `body`. */
  serveHttp(ns: string, body: string, port = 80): void {
    const www = mkdtempSync(join(this.dir, 'www-'));
    writeFileSync(join(www, 'index.html'), `${body}\n`);
    this.servers.push(spawnInNetns(ns, ['busybox', 'httpd', '-f', '-p', String(port), '-h', www], { stdio: 'ignore' }));
  }

  /** Serves a UDP echo on [::]:53 in the pod (dual-stack node dgram socket), answering `pod-<index>:<msg>`. */
  serveUdp(pod: Pod, port = 53): void {
    const code = `const s=require('node:dgram').createSocket({type:'udp6',ipv6Only:false});s.on('message',(m,r)=>s.send('pod-${pod.index}:'+m,r.port,r.address));s.bind(${port});`;
    this.servers.push(spawnInNetns(pod.ns.name, [process.execPath, '-e', code], { stdio: 'ignore' }));
  }

  /** Serves TCP on [::]:`port` in the pod, answering the peer address it sees (to tell masquerade apart). */
  serveWhoami(pod: Pod, port = 81): void {
    const code = `require('node:net').createServer((c)=>c.end(c.remoteAddress.replace(/^::ffff:/,''))).listen(${port});`;
    this.servers.push(spawnInNetns(pod.ns.name, [process.execPath, '-e', code], { stdio: 'ignore' }));
  }

  /** Runs a portmap handler in-process inside the node netns (synchronous, so withNetns allows it). */
  inNode<T>(fn: () => T): T {
    const h = openNetns(this.node.path);
    try {
      return withNetns(h, fn);
    } finally {
      h.close();
    }
  }

  /** Kills servers, deletes the namespaces and the temp dir. */
  async destroy(): Promise<void> {
    for (const s of this.servers) s.kill('SIGKILL');
    for (const p of this.pods) await p.ns.destroy();
    await this.client.destroy();
    await this.node.destroy();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** CmdArgs for a handler call, as the skeleton would build them. */
export function cmdArgs(command: CmdArgs['command'], pod: Pick<Pod, 'containerId' | 'ns'>, opts: { portMappings?: unknown[]; prevResult?: Result | undefined; netns?: string; conf?: Record<string, unknown> } = {}): CmdArgs {
  const config = { cniVersion: '1.0.0', name: 'pmnet', type: 'portmap', ...opts.conf, ...(opts.portMappings === undefined ? {} : { runtimeConfig: { portMappings: opts.portMappings } }) };
  const a: CmdArgs = {
    command,
    containerId: pod.containerId,
    netns: opts.netns ?? pod.ns.path,
    ifName: 'eth0',
    args: '',
    path: [],
    stdinData: Buffer.from(JSON.stringify(config)),
    config,
    cniVersion: '1.0.0',
    env: {},
  };
  if (opts.prevResult !== undefined) a.prevResult = opts.prevResult;
  return a;
}

/** HTTP GET with curl from a namespace; the body, or '' when nothing answered within 2 s. */
export async function fetchFrom(ns: string, host: string, port: number, expect?: string): Promise<string> {
  const url = host.includes(':') ? `http://[${host}]:${port}/` : `http://${host}:${port}/`;
  // Where an answer is expected, try up to 3 times: on a loaded machine the first SYNs (IPv6 ones
  // behind neighbour discovery especially) can miss curl's 2 s window. A refusal is never retried.
  let got = '';
  for (let i = 0; i < (expect ? 3 : 1); i++) {
    const r = await run(inNetns(ns, ['curl', '-s', '-g', '--max-time', '2', url]));
    got = r.code === 0 ? r.stdout.trim() : '';
    if (!expect || got === expect) break;
  }
  return got;
}

/** Sends one UDP datagram from a namespace and returns the first reply ('' on timeout). */
export async function udpAsk(ns: string, host: string, port: number, opts: { msg?: string; srcPort?: number } = {}): Promise<string> {
  const msg = opts.msg ?? 'hi';
  // A fixed source port reuses the same conntrack entry, as a long-lived UDP client (DNS, syslog) does.
  const code = `const s=require('node:dgram').createSocket('${host.includes(':') ? 'udp6' : 'udp4'}');const t=setTimeout(()=>{s.close();},1500);s.on('message',(m)=>{process.stdout.write(String(m));clearTimeout(t);s.close();});s.bind(${opts.srcPort ?? 0},()=>s.send('${msg}',${port},'${host}'));`;
  const r = await run(inNetns(ns, [process.execPath, '-e', code]));
  return r.stdout.trim();
}

/** Reads what a TCP server sends right after connecting (curl telnet-less: busybox nc); '' when refused. */
export async function fetchRaw(ns: string, host: string, port: number): Promise<string> {
  const r = await run(inNetns(ns, ['busybox', 'nc', '-w', '2', host, String(port)]));
  return r.code === 0 ? r.stdout.trim() : '';
}
