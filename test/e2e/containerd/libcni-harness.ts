// The libcni harness (test/tools/libcni-harness: containerd v2.4.2's go-cni and libcni), built once
// by scripts/libcni-setup.sh, and one call of it inside a test namespace.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { run, type TestNetns } from '../../../testkit/netns.ts';

export const ROOT = join(import.meta.dirname, '..', '..', '..');

/** What the harness printed (one JSON line). */
export interface HarnessOut {
  ok: boolean;
  code?: number;
  error?: string;
  versions?: string[];
  cniVersion?: string;
  result?: { cniVersion?: string; ips?: Array<{ address: string }> };
}

/** The harness binary's path, building it when the cache lacks it (the Go module proxy, about a minute cold). */
export async function libcniHarness(): Promise<string> {
  const r = await run(['bash', join(ROOT, 'scripts', 'libcni-setup.sh')], { timeoutMs: 280_000 });
  assert.equal(r.code, 0, `scripts/libcni-setup.sh failed: ${r.stderr}`);
  const path = r.stdout.trim().split('\n').pop() ?? '';
  assert.ok(existsSync(path), `scripts/libcni-setup.sh printed ${JSON.stringify(path)}`);
  return path;
}

/** Runs `harness <args>` inside `ns`; its JSON line (a non-JSON output fails, naming what it printed). */
export async function drive(ns: TestNetns, harness: string, args: string[]): Promise<HarnessOut> {
  const r = await ns.exec([harness, ...args]);
  const line = r.stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(line) as HarnessOut;
  } catch {
    throw new Error(`harness ${args.join(' ')}: exit ${r.code}, stdout ${r.stdout}, stderr ${r.stderr}`);
  }
}
