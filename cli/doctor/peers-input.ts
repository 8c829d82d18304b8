// The input of the peers check, read once by doctor.ts: check-peers.ts takes it, and hands it to
// check-udp.ts on the udp backend (whose per-peer state is weftd's forwarder table, not the kernel's).
import type { Lease, NetConf, Uplink } from '../../agent/inspect.ts';
import type { NodeState } from './node-state.ts';

/** Inputs of the peers check. */
export interface PeersInput {
  netConf: NetConf;
  leases: readonly Lease[];
  own: Lease;
  uplink: Uplink;
  node: NodeState;
  /** weftd's parsed /metrics (udp: its forwarder entries), null when not read. */
  metrics?: Map<string, number> | null;
}
