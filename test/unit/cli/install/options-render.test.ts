// normalizeInstallOptions (defaults, absolute dirs, errors naming the option) and the rendered files.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { DEFAULTS, FLANNEL_NETWORK_NAME, InstallOptionError, normalizeInstallOptions } from '../../../../cli/install/options.ts';
import { conflistTypes, renderConflist, renderNetConf, renderWeftdUnit } from '../../../../cli/install/render.ts';

describe('normalizeInstallOptions', () => {
  test('defaults are the paths a node uses', () => {
    const o = normalizeInstallOptions({ sourceDir: '/src' });
    assert.equal(o.backend, 'bridge');
    assert.equal(o.binDir, '/opt/cni/bin');
    assert.equal(o.confDir, '/etc/cni/net.d');
    assert.equal(o.unitDir, '/etc/systemd/system');
    assert.equal(o.stateDir, '/var/lib/weft/install');
    assert.equal(o.conflistName, DEFAULTS.conflistName);
    assert.equal(o.dryRun, false);
  });

  test('relative dirs become absolute', () => {
    const o = normalizeInstallOptions({ sourceDir: 'dist/bin', binDir: 'x/../y' });
    assert.equal(o.sourceDir, `${process.cwd()}/dist/bin`);
    assert.equal(o.binDir, `${process.cwd()}/y`);
  });

  const bad: Array<[Record<string, unknown>, RegExp]> = [
    [{ backend: 'calico' }, /^--backend: "calico" is not one of bridge, flannel-vxlan, host-gw, flannel-udp$/],
    [{ network: '10.0.0.0/7' }, /^--network: "10\.0\.0\.0\/7"/],
    [{ network: '300.0.0.0/16' }, /^--network: "300/],
    [{ network: 'fd00::/64' }, /^--network: "fd00::\/64"/],
    [{ network: '10.244.1.0/16' }, /^--network: "10\.244\.1\.0\/16" has host bits set; the network is 10\.244\.0\.0\/16$/],
    [{ network: '192.168.1.1/24', backend: 'bridge' }, /^--network: "192\.168\.1\.1\/24" has host bits set; the network is 192\.168\.1\.0\/24$/],
    [{ networkName: 'a/b' }, /^--network-name: "a\/b"/],
    [{ conflistName: '../10-weft.conflist' }, /^--conflist-name/],
    [{ conflistName: 'weft.conf' }, /^--conflist-name/],
    [{ binDir: '' }, /^--bin-dir: must not be empty$/],
    [{ backend: 7 }, /^backend: expected a string, got 7$/],
  ];
  for (const [raw, re] of bad) {
    test(`refuses ${JSON.stringify(raw)}`, () => {
      assert.throws(() => normalizeInstallOptions({ sourceDir: '/src', ...raw }), (e: unknown) => e instanceof InstallOptionError && re.test(e.message));
    });
  }
});

describe('network name', () => {
  const t = mkdtempSync(join(tmpdir(), 'weft-unit-netname-'));
  after(() => rmSync(t, { recursive: true, force: true }));
  const fixture = join(import.meta.dirname, '..', '..', '..', 'fixtures', 'real-configs', 'kube-flannel.conflist');
  const name = (confDir: string, raw: Record<string, unknown> = {}): string => normalizeInstallOptions({ sourceDir: '/src', confDir, ...raw }).networkName;
  const weftd = { backend: 'flannel-vxlan', singleNode: true };

  test('without a flannel conflist: cbr0 (kube-flannel\'s) for the weftd backends, weft for bridge', () => {
    const empty = join(t, 'empty');
    assert.equal(FLANNEL_NETWORK_NAME, 'cbr0');
    for (const backend of ['flannel-vxlan', 'host-gw', 'flannel-udp']) assert.equal(name(empty, { backend, singleNode: true }), 'cbr0', backend);
    assert.equal(name(empty), DEFAULTS.networkName);
    assert.equal(DEFAULTS.networkName, 'weft');
  });

  test('replacing a flannel conflist keeps its name, whatever the backend; --network-name wins', () => {
    const kube = join(t, 'kube');
    const custom = join(t, 'custom');
    mkdirSync(kube, { recursive: true });
    mkdirSync(custom, { recursive: true });
    copyFileSync(fixture, join(kube, '10-flannel.conflist'));
    assert.equal(name(kube, weftd), 'cbr0');
    assert.equal(name(kube), 'cbr0', 'the bridge backend over flannel too');
    writeFileSync(join(custom, '05-broken.conflist'), '{');
    writeFileSync(join(custom, '07-other.conflist'), JSON.stringify({ name: 'podman', plugins: [{ type: 'bridge' }] }));
    writeFileSync(join(custom, '10-flannel.conflist'), JSON.stringify({ cniVersion: '0.3.1', name: 'mynet', plugins: [{ type: 'flannel' }] }));
    writeFileSync(join(custom, '20-flannel.conflist'), JSON.stringify({ cniVersion: '0.3.1', name: 'later', plugins: [{ type: 'flannel' }] }));
    assert.equal(name(custom, weftd), 'mynet', 'the first flannel conflist (the one runtimes load)');
    assert.equal(name(custom, { ...weftd, networkName: 'weft' }), 'weft');
    const doc = JSON.parse(renderConflist({ backend: 'host-gw', networkName: name(custom, weftd), network: '10.244.0.0/16' })) as { cniVersion: string; cniVersions: string[]; name: string };
    assert.deepEqual([doc.cniVersion, doc.cniVersions, doc.name], ['1.0.0', ['1.0.0', '1.1.0'], 'mynet'], 'cniVersion for old runtimes, cniVersions up to 1.1.0 for STATUS and GC');
  });
});

describe('render', () => {
  test('bridge conflist: bridge + host-local on the network, portmap chained', () => {
    const text = renderConflist({ backend: 'bridge', networkName: 'n1', network: '10.1.0.0/16' });
    const doc = JSON.parse(text) as { cniVersion: string; name: string; plugins: Array<Record<string, unknown>> };
    assert.equal(doc.cniVersion, '1.0.0');
    assert.equal(doc.name, 'n1');
    assert.deepEqual(doc.plugins[0]?.['ipam'], { type: 'host-local', ranges: [[{ subnet: '10.1.0.0/16' }]] });
    assert.deepEqual(doc.plugins[1], { type: 'portmap', capabilities: { portMappings: true } });
    assert.deepEqual(conflistTypes(text), ['bridge', 'host-local', 'portmap']);
    assert.ok(text.endsWith('}\n'));
  });

  for (const [backend, type] of [['flannel-vxlan', 'vxlan'], ['host-gw', 'host-gw'], ['flannel-udp', 'udp']] as const) {
    test(`${backend}: flannel + portmap as kube-flannel writes them; net-conf Backend.Type ${type}`, () => {
      const text = renderConflist({ backend, networkName: 'weft', network: '10.244.0.0/16' });
      assert.deepEqual(conflistTypes(text), ['flannel', 'portmap']);
      const plugin = (JSON.parse(text) as { plugins: Array<Record<string, unknown>> }).plugins[0];
      assert.deepEqual(plugin, { type: 'flannel', delegate: { hairpinMode: true, isDefaultGateway: true } }, 'flannel\'s default subnetFile and dataDir');
      assert.deepEqual(JSON.parse(renderNetConf({ backend, network: '10.244.0.0/16' })), { Network: '10.244.0.0/16', SubnetLen: 24, Backend: { Type: type } });
    });
  }

  test('the bridge backend has no net-conf', () => {
    assert.throws(() => renderNetConf({ backend: 'bridge', network: '10.1.0.0/16' }), /no weftd configuration/);
  });

  test('unit runs weftd from agentDir with the net-conf from weftConfDir', () => {
    const unit = renderWeftdUnit({ agentDir: '/a', weftConfDir: '/c' });
    assert.match(unit, /^ExecStart=\/a\/weftd --net-conf=\/c\/net-conf\.json /m);
    assert.match(unit, /^WantedBy=multi-user\.target$/m);
  });

  test('a standalone install runs weftd as `<binDir>/weft weftd`', () => {
    const unit = renderWeftdUnit({ agentDir: '/a', binDir: '/opt/cni/bin', standaloneFile: '/src/weft', weftConfDir: '/c' });
    assert.match(unit, /^ExecStart=\/opt\/cni\/bin\/weft weftd --net-conf=\/c\/net-conf\.json /m);
    assert.doesNotMatch(unit, /\/a\/weftd/);
  });
});
