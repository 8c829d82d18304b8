// ADD/DEL/CHECK of the flannel plugins (flannel, flannel-vxlan, host-gw, flannel-udp in plugins/): read subnet.env, render
// and store the delegate config, delegate to it (in-process when main.ts registered it and CNI_PATH
// holds our bundle of it); DEL replays the stored one.
// Runs in the runtime's (node's) netns; the pod netns is only touched by the delegate.
import { delegateAdd, delegateCheck, delegateDel, delegateValidateAdd } from '../cni/delegate.ts';
import { CniError, ErrorCode, unknownContainer } from '../cni/errors.ts';
import { log } from '../cni/log.ts';
import { markShortRun } from '../sys/code-cache-hint.ts';
import { Rollback } from '../cni/rollback.ts';
import type { CmdArgs, Plugin } from '../cni/plugin.ts';
import type { NetConf, Result } from '../cni/types.ts';
import { SUPPORTED_VERSIONS } from '../cni/types.ts';
import { WEFT_VERSION } from '../version.ts';
import { delDataDir, normalizeFlannelConfig, type FlannelConfig } from './config.ts';
import { renderDelegate } from './render.ts';
import { loadDelegateConf, removeDelegateConf, saveDelegateConf } from './scratch.ts';
import { cmdGc } from './gc.ts';
import { cmdStatus } from './status.ts';
import { readFlannelSubnetFile, type FlannelEnv } from '../flannel/subnet-file.ts';

/** Backend-specific work before the delegate runs (flannel-vxlan: make sure the VTEP exists). */
export interface FlannelHooks {
  beforeAdd?: (cfg: FlannelConfig, env: FlannelEnv) => void;
  /** 'delegate' (default): CHECK replays the stored config through the delegate; 'none': success, as flannel's plugin. */
  check?: 'delegate' | 'none';
}

function delegateType(conf: Record<string, unknown>): string {
  const t = conf['type'];
  return typeof t === 'string' ? t : 'bridge';
}

/** The stored delegate config with the runtime's prevResult (CHECK, DEL on 0.4.0+) injected. */
function withPrevResult(stored: Buffer, a: CmdArgs): { type: string; bytes: Buffer } {
  const conf = JSON.parse(stored.toString('utf8')) as Record<string, unknown>;
  if (a.config.prevResult !== undefined) conf['prevResult'] = a.config.prevResult;
  return { type: delegateType(conf), bytes: Buffer.from(JSON.stringify(conf)) };
}

async function cmdAdd(a: CmdArgs, hooks: FlannelHooks): Promise<Result> {
  const cfg = normalizeFlannelConfig(a.config, a.cniVersion);
  const env = readFlannelSubnetFile(cfg.subnetFile);
  const conf = renderDelegate(cfg, env);
  const bytes = Buffer.from(JSON.stringify(conf));
  const type = delegateType(conf);
  // The delegate's (and its IPAM's) own checks, before the VTEP, the stored config or the bridge exist.
  // The same decoded object goes to the ADD: an in-process delegate reuses what its checks found.
  const decoded = { config: conf as NetConf, cniVersion: cfg.cniVersion };
  await delegateValidateAdd(type, bytes, a.env, decoded);
  hooks.beforeAdd?.(cfg, env);
  // ADD leaves nothing behind: the delegate's partial work is undone, then the config forgotten.
  return new Rollback().run(async (rb) => {
    // Stored before ADD so that a DEL after a crash mid-ADD still finds what to undo.
    saveDelegateConf(cfg.dataDir, a.containerId, conf);
    rb.push('stored delegate config', () => removeDelegateConf(cfg.dataDir, a.containerId));
    rb.push(`${type} ADD`, async () => {
      try { await delegateDel(type, bytes, a.env); } catch { /* the delegate's own rollback ran already */ }
    });
    return await delegateAdd(type, bytes, a.env, decoded);
  });
}

async function cmdDel(a: CmdArgs): Promise<void> {
  const dataDir = delDataDir(a.config);
  let stored: Buffer | null = null;
  try {
    stored = dataDir === null ? null : loadDelegateConf(dataDir, a.containerId);
  } catch (e) {
    log.warn('cannot read the stored delegate config; nothing to replay', { containerId: a.containerId, error: e });
  }
  if (dataDir === null || stored === null) {
    // Never added, or deleted already: success, as in flannel; too short a run to make the DEL's code cache from.
    markShortRun();
    return;
  }
  let replay: { type: string; bytes: Buffer };
  try {
    replay = withPrevResult(stored, a);
  } catch (e) {
    // flannel's plugin too treats an unreadable stored config as done (the bridge port stays until reboot).
    log.warn('stored delegate config is not JSON; removing it', { containerId: a.containerId, error: e });
    removeDelegateConf(dataDir, a.containerId);
    return;
  }
  try {
    await delegateDel(replay.type, replay.bytes, a.env);
  } catch (e) {
    // A stall (code 11: a held IPAM lock, a hung nft) passes a retry: keep the stored config so that the
    // runtime's next DEL replays it, and say so with 11, as flannel keeps its scratch file on a failed DEL.
    if (e instanceof CniError && e.code === ErrorCode.tryAgainLater) throw e;
    // DEL never blocks cleanup otherwise: the delegate released what it could, and a retry would fail the same way.
    log.warn('delegate DEL failed; forgetting the stored config anyway', { containerId: a.containerId, type: replay.type, error: e });
  }
  removeDelegateConf(dataDir, a.containerId);
}

async function cmdCheck(a: CmdArgs, hooks: FlannelHooks): Promise<void> {
  const cfg = normalizeFlannelConfig(a.config, a.cniVersion);
  if (hooks.check === 'none') return;
  const stored = loadDelegateConf(cfg.dataDir, a.containerId);
  if (stored === null) throw unknownContainer(`no stored delegate config for ${a.containerId}`, `looked in ${cfg.dataDir}`);
  const { type, bytes } = withPrevResult(stored, a);
  await delegateCheck(type, bytes, a.env);
}

/** A flannel plugin object named `name` with the given backend hooks. */
export function makeFlannelPlugin(name: string, hooks: FlannelHooks = {}): Plugin {
  return {
    name,
    version: WEFT_VERSION,
    supportedVersions: SUPPORTED_VERSIONS,
    add: (a) => cmdAdd(a, hooks),
    del: cmdDel,
    check: (a) => cmdCheck(a, hooks),
    status: cmdStatus,
    gc: cmdGc,
  };
}
