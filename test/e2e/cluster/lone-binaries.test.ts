// Decision 1: every executable runs with no node_modules beside it. The built dist/bin is copied to
// a temp dir outside the repository (no package.json, no node_modules up the tree) and a 2-node
// vxlan cluster with etcd (weftd's largest dependency, etcd3 with its gRPC protos) runs from there.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Cluster } from '../../../testkit/cluster.ts';
import { canPing } from '../../../testkit/probe.ts';
import { skipReason } from './helpers.ts';

const DIST = join(import.meta.dirname, '..', '..', '..', 'dist', 'bin');

/** True when some directory from `dir` up to / holds node_modules (the copy would not be alone). */
function nodeModulesAbove(dir: string): boolean {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, 'node_modules'))) return true;
    if (dirname(d) === d) return false;
  }
}

void describe('the built executables copied alone', { skip: skipReason({ etcd: true }), timeout: 180_000 }, () => {
  const bin = mkdtempSync(join(tmpdir(), 'weft-lone-bin-'));
  let c: Cluster | undefined;
  after(() => {
    c?.destroy();
    rmSync(bin, { recursive: true, force: true });
  });

  it('run a vxlan cluster with etcd: weftd leases, plugins wire pods, pods reach each other', async () => {
    for (const f of readdirSync(DIST)) cpSync(join(DIST, f), join(bin, f));
    assert.equal(nodeModulesAbove(bin), false, `${bin} must have no node_modules above it`);
    c = await Cluster.create({ backend: 'vxlan', store: 'etcd', nodes: 2, podsPerNode: 1, binDir: bin });
    const [a, b] = c.pods;
    assert.ok(a && b && a.node !== b.node);
    assert.equal(await canPing(a.netns, b.ip), true, `${a.name} -> ${b.name} ${b.ip}`);
    assert.match(c.weftdLog(a.node), /lease acquired/);
  });
});
