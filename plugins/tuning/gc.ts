// GC (CNI 1.1): drop this network's state files whose attachment is not in cni.dev/valid-attachments
// (their pods are gone, so there is nothing left to restore).
import { invalidConfig } from '../../lib/cni/errors.ts';
import type { CmdArgs } from '../../lib/cni/plugin.ts';
import { join } from 'node:path';
import { parseTuningConfig } from './config.ts';
import { listStates, removeState } from './state.ts';

/** The files of `network` in `listed` that no valid attachment owns. Pure. */
export function staleFiles(listed: readonly { file: string; state: { network?: string } | null }[], network: string, valid: readonly { containerId: string; ifName: string }[]): string[] {
  const keep = new Set(valid.map((v) => `${v.containerId}_${v.ifName}.json`));
  return listed.filter((l) => l.state?.network === network && !keep.has(l.file)).map((l) => l.file);
}

/** GC, on the node's filesystem only. */
export function cmdGc(a: CmdArgs): void {
  const cfg = parseTuningConfig(a);
  if (cfg.validAttachments === null) throw invalidConfig('invalid configuration: GC needs cni.dev/valid-attachments');
  for (const f of staleFiles(listStates(cfg.dataDir), cfg.name, cfg.validAttachments)) removeState(join(cfg.dataDir, f));
}
