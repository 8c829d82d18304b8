// doctor's command line as weftd's: flanneld syntax and FLANNELD_* forms (only the flags doctor
// shares), and the installed unit's flags as defaults (its EnvironmentFile expanded).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { doctorArgv } from '../../../../cli/doctor/argv.ts';
import { DoctorOptionError } from '../../../../cli/doctor/options.ts';
import { parseEnvironmentFile, parseUnitFlags, readUnitFlags, withUnitDefaults } from '../../../../cli/doctor/unit.ts';

describe('doctorArgv', () => {
  test('Go syntax becomes commander\'s; FLANNELD_* fill what the command line lacks', () => {
    const env = { FLANNELD_ETCD_ENDPOINTS: 'https://e:2379', FLANNELD_ETCD_PASSWORD: 'pw', FLANNELD_ETCD_USERNAME: 'root', FLANNELD_IFACE: 'eth1' };
    assert.deepEqual(doctorArgv(['-etcd-cafile=/ca.pem', '--iface', 'eth0', '--json'], env), [
      '--etcd-cafile=/ca.pem', '--iface=eth0', '--json', '--etcd-endpoints=https://e:2379', '--etcd-username=root', '--etcd-password=pw',
    ]);
  });
  test('FLANNELD_* of flags doctor does not take are ignored, not refused', () => {
    assert.deepEqual(doctorArgv([], { FLANNELD_IP_MASQ: 'true', FLANNELD_IPTABLES_RESYNC: '10', FLANNELD_SUBNET_FILE: '/run/x.env' }), ['--subnet-file=/run/x.env']);
  });
  test('a malformed flanneld flag is a DoctorOptionError', () => {
    assert.throws(() => doctorArgv(['--etcd-endpoints'], {}), DoctorOptionError);
  });
});

describe('the installed unit as defaults', () => {
  const unit = [
    '[Service]', 'EnvironmentFile=/etc/weft/weftd.env',
    'ExecStart=/usr/local/bin/weftd --etcd-endpoints=https://10.0.0.1:2379 --etcd-cafile=/etc/weft/ca.pem --etcd-username=root --etcd-password=${WEFTD_ETCD_PASSWORD} --subnet-file=/run/flannel/subnet.env --ip-masq --metrics-addr 127.0.0.1:9101',
  ].join('\n');

  test('parseUnitFlags reads the shared flags and expands the password', () => {
    const env = parseEnvironmentFile('# secrets\nWEFTD_ETCD_PASSWORD="p\\"w"\n');
    assert.deepEqual(parseUnitFlags(unit, env), {
      etcdEndpoints: 'https://10.0.0.1:2379', etcdCafile: '/etc/weft/ca.pem', etcdUsername: 'root', etcdPassword: 'p"w',
      subnetFile: '/run/flannel/subnet.env', metricsAddr: '127.0.0.1:9101',
    });
  });

  test('the command line wins; naming a lease source drops the unit\'s (and its --net-conf) whole', () => {
    const u = { etcdEndpoints: 'https://a:2379', etcdUsername: 'root', netConf: '/etc/weft/net-conf.json', subnetFile: '/run/a.env' };
    assert.deepEqual(withUnitDefaults({ subnetFile: '/run/b.env' }, u), { ...u, subnetFile: '/run/b.env' });
    assert.deepEqual(withUnitDefaults({ store: 'file:/x' }, u), { store: 'file:/x', subnetFile: '/run/a.env' });
    assert.deepEqual(withUnitDefaults({ json: true }, null), { json: true });
  });

  test('readUnitFlags: a missing default unit is no unit; a missing named one is an error', () => {
    const dir = mkdtempSync(join(tmpdir(), 'weft-doctor-unit-'));
    try {
      assert.equal(readUnitFlags(join(dir, 'none.service'), false), null);
      assert.throws(() => readUnitFlags(join(dir, 'none.service'), true), /--unit ".*none\.service": ENOENT/);
      writeFileSync(join(dir, 'weftd.env'), 'WEFTD_ETCD_PASSWORD="s3cret"\n');
      writeFileSync(join(dir, 'weftd.service'), unit.replace('/etc/weft/weftd.env', join(dir, 'weftd.env')));
      assert.equal(readUnitFlags(join(dir, 'weftd.service'), true)?.etcdPassword, 's3cret');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
