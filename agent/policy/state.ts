// The policy view weftd --network-policy leaves for `weft doctor` (runs in any netns: a file): this
// node's pods with their addresses and the policies selecting them, and per policy its chains and
// target sets. Written after each pass that changed it, next to subnet.env; doctor compares it with
// the kernel's table, so a selected pod whose address no set holds is named.
import { dirname, join } from 'node:path';
import { writeFileAtomicSync } from '../../lib/fs/atomic-write.ts';
import type { DesiredPolicy, LocalPod } from './desired.ts';

/** One policy in the view: its chains and counters (absent when the type is off) and its target sets. */
export interface PolicyViewEntry {
  policy: string;
  ingressChain?: string;
  egressChain?: string;
  targetSets: Partial<Record<'4' | '6', string>>;
}

/** What the file holds. */
export interface PolicyView {
  version: 1;
  table: string;
  policies: PolicyViewEntry[];
  pods: LocalPod[];
}

/** Where weftd writes the view: beside its subnet file (`/run/flannel/network-policy.json` by default). */
export function policyViewPath(subnetFile: string): string {
  return join(dirname(subnetFile), 'network-policy.json');
}

/** The view of a desired table (pure). */
export function formatPolicyView(table: string, d: DesiredPolicy): string {
  const view: PolicyView = {
    version: 1, table,
    policies: d.plans.map((p) => ({ policy: p.key, ...(p.ingressChain !== undefined ? { ingressChain: p.ingressChain } : {}), ...(p.egressChain !== undefined ? { egressChain: p.egressChain } : {}), targetSets: p.targetSets })),
    pods: d.local,
  };
  return `${JSON.stringify(view)}\n`;
}

/** Parses a view; null when it is not one (an older or foreign file). */
export function parsePolicyView(text: string): PolicyView | null {
  try {
    const v = JSON.parse(text) as Partial<PolicyView>;
    if (v.version !== 1 || typeof v.table !== 'string' || !Array.isArray(v.policies) || !Array.isArray(v.pods)) return null;
    return v as PolicyView;
  } catch {
    return null;
  }
}

/** Delay of the view after a pass (ms): a burst of passes writes it once, and no pass waits for it. */
const VIEW_DELAY_MS = 50;

/** Writes the view when it differs from the last one written (atomic rename); failures go to `onError`. */
export class PolicyViewWriter {
  private last = '';
  private due: { table: string; d: DesiredPolicy } | undefined;
  private timer: NodeJS.Timeout | undefined;
  constructor(private readonly path: string, private readonly onError: (e: unknown) => void = () => {}) {}

  /** Writes the view of `d` now. */
  write(text: string): void {
    if (text === this.last) return;
    // A runtime view, rewritten on change: no fsync on the change path.
    writeFileAtomicSync(this.path, text, { mode: 0o644, fsync: false });
    this.last = text;
  }

  /** Writes the view of `d` VIEW_DELAY_MS from now, unless a later call replaces it first. */
  writeSoon(table: string, d: DesiredPolicy): void {
    this.due = { table, d };
    this.timer ??= setTimeout(() => this.flush(), VIEW_DELAY_MS).unref();
  }

  /** Writes a pending view now (weftd stopping). */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const due = this.due;
    this.due = undefined;
    if (due === undefined) return;
    try {
      this.write(formatPolicyView(due.table, due.d));
    } catch (e) {
      this.onError(e);
    }
  }
}
