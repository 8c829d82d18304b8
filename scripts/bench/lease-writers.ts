// Lease writers of the weftd benchmarks: remote leases put into the cluster's store the way other
// nodes would (file store renames, etcd puts, Nodes created through the Kubernetes API), from helper
// processes inside the store's namespace where the bench process cannot reach the underlay.
import { spawn } from 'node:child_process';
import { renameSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { formatLeaseFile, leasePath } from '../../agent/lease/file/lease-io.ts';
import { formatLeaseAttrs, formatSubnetKey } from '../../agent/lease/lease-json.ts';
import type { Lease } from '../../agent/lease/store.ts';
import { vtepMac } from '../../lib/flannel/vtep.ts';
import type { Cluster } from '../../testkit/cluster.ts';
import { inNetns } from '../../testkit/netns.ts';
import { ROOT } from './util.ts';

/** Subnet i of 10.0.0.0/8 in /24s, skipping the first 1,024 so real nodes never collide (i < 60,000). */
export function fakeLease(i: number): Lease {
  const n = 1024 + i;
  const publicIp = `198.18.${(n >> 8) & 255}.${n & 255}`;
  return {
    subnet: `10.${(n >> 8) & 255}.${n & 255}.0/24`, publicIp, backendType: 'vxlan',
    backendData: { VNI: 1, VtepMAC: vtepMac(publicIp, 1) }, expiration: Date.now() + 3_600_000,
  };
}

/** Writes leases into the cluster's store; resolves with the wall-clock ms just before the first write. */
export interface LeaseWriter {
  write(leases: Lease[]): Promise<number>;
  close(): void;
  /** Wall-clock ms the last write() took until the store acknowledged every lease (helper-process writers). */
  lastWriteMs?: () => number;
}

/** File store: complete temp files first, then the renames back to back (as the store itself writes). */
export function fileWriter(dir: string): LeaseWriter {
  let seq = 0;
  return {
    write: (leases) => {
      const commits = leases.map((l) => {
        const tmp = join(dir, `.bench-${seq++}`);
        writeFileSync(tmp, formatLeaseFile(l));
        return () => renameSync(tmp, leasePath(dir, l.subnet));
      });
      const t0 = performance.timeOrigin + performance.now();
      for (const f of commits) f();
      return Promise.resolve(t0);
    },
    close: () => undefined,
  };
}

/** A writer helper process (scripts/bench/<script>) in `netns`: one JSON line per request, each answered with {t0, done}. */
export function startHelper(netns: string, script: string, arg: string): { send(req: unknown): Promise<{ t0: number; done: number }>; close(): void } {
  const [file = 'ip', ...args] = inNetns(netns, [process.execPath, '--import', 'tsx', join(ROOT, 'scripts', 'bench', script), arg]);
  const child = spawn(file, args, { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  const answers: Array<(a: { t0: number; done: number }) => void> = [];
  createInterface({ input: child.stdout }).on('line', (line) => answers.shift()?.(JSON.parse(line) as { t0: number; done: number }));
  return {
    send: (req) => new Promise((resolve) => {
      answers.push(resolve);
      child.stdin.write(`${JSON.stringify(req)}\n`);
    }),
    close: () => { child.stdin.end(); },
  };
}

/** A lease writer over a helper: resolves each write with the wall ms of its first request. */
function helperWriter(netns: string, script: string, arg: string, request: (leases: Lease[]) => unknown): LeaseWriter {
  const h = startHelper(netns, script, arg);
  let last = NaN;
  return {
    write: async (leases) => {
      const a = await h.send(request(leases));
      last = a.done - a.t0;
      return a.t0;
    },
    close: h.close,
    lastWriteMs: () => last,
  };
}

/** etcd: flannel's keys and JSON, written by a helper process inside the etcd namespace. */
export function etcdWriter(c: Cluster): LeaseWriter {
  if (!c.etcd) throw new Error('no etcd in this cluster');
  return helperWriter(c.etcd.netns, 'etcd-writer.ts', c.etcd.url, (leases) => ({
    puts: leases.map((l) => [`/coreos.com/network/subnets/${formatSubnetKey(l.subnet)}`, formatLeaseAttrs(l)]),
  }));
}

const P = 'flannel.alpha.coreos.com';

/** kube: each lease a Node as flanneld on another machine leaves it (podCIDR + annotations), created through the API. */
export function kubeWriter(c: Cluster): LeaseWriter {
  if (!c.kube) throw new Error('no kube-apiserver in this cluster');
  return helperWriter(c.kube.netns, 'kube-writer.ts', c.kube.kubeconfig, (leases) => ({
    warm: '/api/v1/nodes?limit=1',
    reqs: leases.map((l) => ['POST', '/api/v1/nodes', {
      apiVersion: 'v1', kind: 'Node', spec: { podCIDR: l.subnet, podCIDRs: [l.subnet] },
      metadata: { name: `bench-${l.subnet.replace(/[./]/g, '-')}`, annotations: {
        [`${P}/backend-type`]: l.backendType, [`${P}/backend-data`]: JSON.stringify(l.backendData),
        [`${P}/kube-subnet-manager`]: 'true', [`${P}/public-ip`]: l.publicIp,
      } },
    }]),
  }));
}

/** The writer of the cluster's store. */
export function writerFor(c: Cluster, store: 'file' | 'etcd' | 'kube'): LeaseWriter {
  return store === 'file' ? fileWriter(c.leaseDir) : store === 'etcd' ? etcdWriter(c) : kubeWriter(c);
}
