// ADD/DEL/CHECK of the flannel plugins (flannel-vxlan, host-gw, flannel-udp): read subnet.env, render
// and store the delegate config, delegate to it (in-process when main.ts registered it and CNI_PATH
// holds our bundle of it); DEL replays the stored one.
// Runs in the runtime's (node's) netns; the pod netns is only touched by the delegate.
import { readFileSync } from 'node:fs';
import { delegateAdd, delegateCheck, delegateDel } from '../../lib/cni/delegate.ts';
import { ioFailure, tryAgainLater, unknownContainer } from '../../lib/cni/errors.ts';
import type { CmdArgs, Plugin } from '../../lib/cni/plugin.ts';
import type { Result } from '../../lib/cni/types.ts';
import { SUPPORTED_VERSIONS } from '../../lib/cni/types.ts';
import { parseSubnetEnv, type SubnetEnv } from '../../lib/flannel/subnet-env.ts';
import { normalizeFlannelConfig, type FlannelConfig } from './config.ts';
import { renderDelegate } from './render.ts';
import { loadDelegateConf, removeDelegateConf, saveDelegateConf } from './scratch.ts';

/** Backend-specific work before the delegate runs (flannel-vxlan: make sure the VTEP exists). */
export interface FlannelHooks {
  beforeAdd?: (cfg: FlannelConfig, env: SubnetEnv) => void;
}

/** Reads subnet.env; a missing file is code 11 (weftd has no lease yet: the runtime retries). */
export function readSubnetFile(path: string): SubnetEnv {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
      throw tryAgainLater(`${path} does not exist yet`, 'weftd writes it once it holds a subnet lease; is weftd running?', e);
    }
    throw ioFailure(`cannot read ${path}`, (e as Error).message, e);
  }
  try {
    return parseSubnetEnv(text);
  } catch (e) {
    throw ioFailure(`cannot parse ${path}`, (e as Error).message, e);
  }
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
  const env = readSubnetFile(cfg.subnetFile);
  hooks.beforeAdd?.(cfg, env);
  const conf = renderDelegate(cfg, env);
  // Stored before ADD so that a DEL after a crash mid-ADD still finds what to undo.
  saveDelegateConf(cfg.dataDir, a.containerId, conf);
  const bytes = Buffer.from(JSON.stringify(conf));
  const type = delegateType(conf);
  try {
    return await delegateAdd(type, bytes, a.env);
  } catch (e) {
    // ADD leaves nothing behind: undo the delegate's partial work, then forget the config.
    try { await delegateDel(type, bytes, a.env); } catch { /* the delegate's own rollback ran already */ }
    removeDelegateConf(cfg.dataDir, a.containerId);
    throw e;
  }
}

async function cmdDel(a: CmdArgs): Promise<void> {
  const cfg = normalizeFlannelConfig(a.config, a.cniVersion);
  const stored = loadDelegateConf(cfg.dataDir, a.containerId);
  if (stored === null) return; // never added, or deleted already: success, as in flannel
  const { type, bytes } = withPrevResult(stored, a);
  await delegateDel(type, bytes, a.env);
  removeDelegateConf(cfg.dataDir, a.containerId);
}

async function cmdCheck(a: CmdArgs): Promise<void> {
  const cfg = normalizeFlannelConfig(a.config, a.cniVersion);
  const stored = loadDelegateConf(cfg.dataDir, a.containerId);
  if (stored === null) throw unknownContainer(`no stored delegate config for ${a.containerId}`, `looked in ${cfg.dataDir}`);
  const { type, bytes } = withPrevResult(stored, a);
  await delegateCheck(type, bytes, a.env);
}

/** A flannel plugin object named `name` with the given backend hooks. */
export function makeFlannelPlugin(name: string, hooks: FlannelHooks = {}): Plugin {
  return {
    name,
    version: '0.1.0',
    supportedVersions: SUPPORTED_VERSIONS,
    add: (a) => cmdAdd(a, hooks),
    del: cmdDel,
    check: cmdCheck,
  };
}
