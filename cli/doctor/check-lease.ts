// Check "lease": this node's lease in the lease source (found by its public IP, as weftd finds it),
// its expiry, and subnet.env agreeing with it (FLANNEL_NETWORK, FLANNEL_SUBNET). Pure.
import type { Lease } from '../../agent/inspect.ts';
import { networkForm, parseSubnetEnv, type SubnetEnv } from '../../lib/flannel/subnet-env.ts';
import type { LeaseView } from './leases.ts';
import type { CheckResult, Problem } from './problem.ts';

/** Inputs: the lease source (or why it could not be read), the public IP, subnet.env's text (or null when absent). */
export interface LeaseCheckInput {
  view: LeaseView | { error: string };
  publicIp: string | null;
  subnetFile: string;
  subnetEnvText: string | null;
  now: number;
}

/** This node's lease, when there is exactly one for its public IP. */
export function ownLease(view: LeaseView, publicIp: string | null): Lease | null {
  return publicIp === null ? null : (view.leases.find((l) => l.publicIp === publicIp) ?? null);
}

const RESTART = 'systemctl restart weftd (it re-acquires the lease and rewrites subnet.env); see journalctl -u weftd';

/** Runs the lease check. */
export function checkLease(i: LeaseCheckInput): CheckResult & { env: SubnetEnv | null } {
  const check = 'lease';
  const problems: Problem[] = [];
  const facts: Record<string, unknown> = {};
  let env: SubnetEnv | null = null;
  if (i.subnetEnvText === null) {
    problems.push({ check, detail: `${i.subnetFile} does not exist: every pod ADD fails`, fix: `start weftd (systemctl enable --now weftd); it writes ${i.subnetFile} once it holds a lease` });
  } else {
    try {
      env = parseSubnetEnv(i.subnetEnvText);
    } catch (e) {
      problems.push({ check, detail: `${i.subnetFile}: ${(e as Error).message}`, fix: RESTART });
    }
  }
  if ('error' in i.view) {
    problems.push({ check, detail: `cannot read the lease source: ${i.view.error}`, fix: 'check that --store/--etcd-endpoints/--net-conf, and for etcd TLS and auth --etcd-cafile/--etcd-certfile/--etcd-keyfile and --etcd-username/--etcd-password, match weftd\'s flags (systemctl cat weftd) and that the store is reachable' });
    return { check, problems, facts, env };
  }
  const mine = i.publicIp === null ? [] : i.view.leases.filter((l) => l.publicIp === i.publicIp);
  // The node's own facts first: they are what a person reads in the table's one line.
  if (mine[0] !== undefined) facts['subnet'] = mine[0].subnet;
  facts['source'] = i.view.source;
  facts['network'] = i.view.netConf.network;
  facts['backend'] = i.view.netConf.backend.type;
  facts['leases'] = i.view.leases.length;
  if (mine.length === 0) {
    problems.push({ check, detail: `no lease in ${i.view.source} for this node's public IP ${i.publicIp ?? '(unknown: no uplink)'}`, fix: RESTART });
  } else if (mine.length > 1) {
    problems.push({ check, detail: `${mine.length} leases name this node's public IP ${i.publicIp ?? ''}: ${mine.map((l) => l.subnet).join(', ')}`, fix: 'remove the lease(s) weftd does not use (the one not in subnet.env) from the store, then restart weftd' });
  }
  const own = mine[0];
  if (own !== undefined) {
    if (own.expiration > 0) {
      const left = Math.round((own.expiration - i.now) / 1000);
      facts['expiresInSeconds'] = left;
      if (left <= 0) problems.push({ check, detail: `lease ${own.subnet} expired ${-left} s ago: another node may take the subnet`, fix: RESTART });
    }
  }
  if (env !== null) {
    if (env.network !== i.view.netConf.network) {
      problems.push({ check, detail: `subnet.env FLANNEL_NETWORK=${env.network} but the net-conf Network is ${i.view.netConf.network}`, fix: RESTART });
    }
    const envSubnet = networkForm(env.subnet);
    if (own !== undefined && envSubnet !== own.subnet) {
      problems.push({ check, detail: `subnet.env FLANNEL_SUBNET=${env.subnet} but this node's lease is ${own.subnet}: new pods get addresses the cluster routes elsewhere`, fix: RESTART });
    }
  }
  return { check, problems, facts, env };
}
