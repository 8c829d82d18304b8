// Ctrl-C while a kubelet cluster runs a pod: the test kit's signal hooks tear it down in order
// (kubelet, containerd and shims, the pod's processes, the holder, cgroups, control plane,
// namespaces), and the census finds nothing left on the machine. The cluster lives in a child process.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { takeCensus } from '../../../testkit/kube-cluster/census.ts';
import { failUnlessReady, skipOutsideCi } from './helpers.ts';

void describe('kubelet cluster teardown on SIGINT', { skip: skipOutsideCi(), timeout: 300_000 }, () => {
  void it('SIGINT while a pod runs: no namespace, cgroup, mount or process is left', async () => {
    failUnlessReady();
    const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'fixtures', 'hold-cluster.ts')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr.on('data', (d: Buffer) => void (err += d.toString()));
    const exited = new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
    const line = await new Promise<string>((res, rej) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const nl = out.indexOf('\n');
        if (nl >= 0) res(out.slice(0, nl));
      });
      void exited.then((code) => rej(new Error(`the fixture exited (${code}) before its cluster was up: ${err.slice(-3000)}`)));
    });
    const held = JSON.parse(line) as { prefix: string; dir: string; cgroups: string[] };
    const before = takeCensus(held.prefix, held.dir, held.cgroups);
    assert.ok(before.netns.length >= 3 && before.cgroups.length > 0 && before.processes.length > 0, `the census sees the running cluster: ${JSON.stringify(before).slice(0, 500)}`);
    child.kill('SIGINT');
    await exited;
    const after = takeCensus(held.prefix, held.dir, held.cgroups);
    assert.deepEqual(after, { netns: [], cgroups: [], mounts: [], processes: [] });
  });
});
