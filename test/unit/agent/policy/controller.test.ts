// PolicyController (agent/policy/controller.ts) with in-memory informers and a stand-in nft that
// records its scripts (no root, no kernel): a pass with no event since the last one reuses the last
// table, a pass after an event takes the model's new table and writes what changed.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PolicyController } from '../../../../agent/policy/controller.ts';
import type { WatchCache } from '../../../../agent/kube/watch-cache.ts';
import { createAgentLog } from '../../../../agent/log.ts';
import { Metrics } from '../../../../agent/metrics.ts';
import { FakeInformer } from '../../../../testkit/fake-informer.ts';
import { waitFor } from '../../../../testkit/wait.ts';
import type { KubeObject } from '../../../../agent/services/informer.ts';

const dir = mkdtempSync(join(tmpdir(), 'weft-policy-ctl-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const scripts = join(dir, 'scripts');
writeFileSync(scripts, '');
// The table never exists for a listing (nft's own message); a script is appended to `scripts`.
const nft = join(dir, 'nft');
writeFileSync(nft, `#!/bin/sh
case "$*" in
  *"-f -"*) cat >> '${scripts}'; echo '#end' >> '${scripts}'; exit 0 ;;
  *) echo 'Error: No such file or directory' >&2; exit 1 ;;
esac
`);
chmodSync(nft, 0o755);

const pod = (name: string, labels: Record<string, string>, ip: string): KubeObject => ({ metadata: { namespace: 'a', name, labels }, spec: {}, status: { phase: 'Running', podIP: ip, hostIP: '192.0.2.1' } } as unknown as KubeObject);

void describe('PolicyController', () => {
  it('reuses the last table on a pass with no event, and takes the new one after an event', async () => {
    const pods = new FakeInformer<KubeObject>([pod('web', { app: 'web' }, '10.244.1.2'), pod('client', {}, '10.244.1.3')]);
    const pols = new FakeInformer<KubeObject>([{ metadata: { namespace: 'a', name: 'web' }, spec: { podSelector: { matchLabels: { app: 'web' } }, ingress: [{ from: [{ podSelector: { matchLabels: { role: 'in' } } }] }] } } as unknown as KubeObject]);
    const nss = new FakeInformer<KubeObject>([{ metadata: { name: 'a' } } as unknown as KubeObject]);
    const byPath: Record<string, FakeInformer<KubeObject>> = { '/api/v1/pods': pods, '/apis/networking.k8s.io/v1/networkpolicies': pols, '/api/v1/namespaces': nss };
    const cache = { informer: (spec: { path: string }) => byPath[spec.path] } as unknown as WatchCache;
    const c = new PolicyController({
      cache, log: createAgentLog('warn'), metrics: new Metrics(), nodeAddrs: () => ['10.244.1.1'], isLocal: (p) => p.hostIP === '192.0.2.1',
      nft: { nftBinary: nft }, resyncMs: 3_600_000,
    });
    try {
      await c.start();
      assert.deepEqual(c.modelRuns, { reused: 0, incremental: 0, full: 1 });
      const written = (): string => readFileSync(scripts, 'utf8');
      assert.match(written(), /10\.244\.1\.2/, 'the first pass writes the whole table');
      const before = written();

      // No event: the pass takes the last table as it is (and finds nothing to write).
      c.pass('retry');
      c.pass('relisted');
      assert.deepEqual(c.modelRuns, { reused: 2, incremental: 0, full: 1 });
      assert.equal(written(), before);

      // An event that changes a peer set: the next pass builds the table from the model and writes the client's address.
      pods.modify(pod('client', { role: 'in' }, '10.244.1.3'));
      await waitFor('the incremental pass after the event', () => c.modelRuns.incremental === 1, 5000, 2);
      assert.equal(c.modelRuns.reused, 2);
      assert.match(written().slice(before.length), /10\.244\.1\.3/);

      // A status-only update changes nothing policy reads: no pass recomputes for it.
      const runs = { ...c.modelRuns };
      pods.modify({ ...pod('client', { role: 'in' }, '10.244.1.3'), status: { phase: 'Running', podIP: '10.244.1.3', hostIP: '192.0.2.1', conditions: [{ type: 'Ready', status: 'True' }] } } as unknown as KubeObject);
      await new Promise((r) => setTimeout(r, 30));
      assert.deepEqual(c.modelRuns, runs);
      c.pass('retry');
      assert.equal(c.modelRuns.reused, runs.reused + 1);
      assert.equal(c.modelRuns.incremental, runs.incremental);
    } finally {
      c.stop();
    }
  });
});
