// agent/inspect.ts, the CLI's one door into the agent: what it drags into a bundle (none of weftd's
// program, daemon, stores or commander) and the flags it gives weftd and doctor alike.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { build } from 'esbuild';
import { Command } from 'commander';
import { weftdCommand } from '../../../agent/flags.ts';
import { leaseSourceFlags, withEtcdSecurityOptions, WEFTD_DEFAULTS } from '../../../agent/inspect.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');

describe('agent/inspect.ts', () => {
  it('bundles without weftd itself: no commander, no flags.ts, weftd.ts or main.ts, no store that connects', async () => {
    const res = await build({ entryPoints: [join(ROOT, 'agent', 'inspect.ts')], bundle: true, write: false, platform: 'node', format: 'esm', metafile: true, logLevel: 'silent', outdir: join(ROOT, 'dist', 'inspect-test') });
    const inputs = Object.keys(res.metafile.inputs);
    assert.ok(inputs.some((p) => p.endsWith('agent/inspect.ts')), inputs.join(' '));
    const banned = inputs.filter((p) => p.includes('node_modules/commander/') || /agent\/(flags|weftd|main)\.ts$/.test(p) || /(^|\/)(etcd3|@grpc)\//.test(p));
    assert.deepEqual(banned, []);
  });

  it("gives weftd's command and another command the same etcd TLS/auth flags", () => {
    const names = (c: Command): string[] => c.options.map((o) => o.long ?? '').filter((n) => /^--etcd-(keyfile|certfile|cafile|username|password)$/.test(n));
    const doctor = withEtcdSecurityOptions(new Command('doctor'));
    assert.deepEqual(names(doctor), ['--etcd-keyfile', '--etcd-certfile', '--etcd-cafile', '--etcd-username', '--etcd-password']);
    assert.deepEqual(names(weftdCommand('0')), names(doctor));
    assert.equal(weftdCommand('0').options.find((o) => o.long === '--subnet-file')?.defaultValue, WEFTD_DEFAULTS.subnetFile);
  });

  it("reads the lease-source flags flanneld's way: --etcd-* alone means flanneld's default endpoints", () => {
    assert.deepEqual(leaseSourceFlags({ etcdCafile: '/ca' }), { etcdEndpoints: 'http://127.0.0.1:4001,http://127.0.0.1:2379', etcdSecurity: { cafile: '/ca' } });
    assert.deepEqual(leaseSourceFlags({ store: 'file:/x' }), { store: 'file:/x' });
  });
});
