// The standalone executable's choice of entry: by the name it was started by, else `weft <name>`.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chooseEntry } from '../../../../cli/standalone/dispatch.ts';

const NAMES = new Set(['loopback', 'bridge', 'host-local', 'weftd', 'weft']);

describe('chooseEntry', () => {
  it('runs the plugin named by argv0 (a hard link or symlink), argv unchanged', () => {
    const argv = ['/opt/cni/bin/bridge', '/opt/cni/bin/bridge', '--x'];
    assert.deepEqual(chooseEntry('/opt/cni/bin/bridge', '/opt/cni/bin/weft', argv, NAMES), { name: 'bridge', argv });
    assert.deepEqual(chooseEntry('host-local', '/opt/cni/bin/host-local', argv, NAMES).name, 'host-local');
  });

  it('falls back to the basename of execPath when argv0 is not a known name', () => {
    assert.equal(chooseEntry('some-wrapper', '/opt/cni/bin/loopback', ['a', 'b'], NAMES).name, 'loopback');
  });

  it('`weft <name> args` runs <name> with the name dropped from argv', () => {
    const r = chooseEntry('/usr/local/bin/weft', '/usr/local/bin/weft', ['/usr/local/bin/weft', '/usr/local/bin/weft', 'weftd', '--iface', 'eth0'], NAMES);
    assert.deepEqual(r, { name: 'weftd', argv: ['/usr/local/bin/weft', '/usr/local/bin/weft', '--iface', 'eth0'] });
  });

  it('anything else is the weft CLI with its argv as given', () => {
    const argv = ['/x/weft', '/x/weft', 'install', '--standalone'];
    assert.deepEqual(chooseEntry('/x/weft', '/x/weft', argv, NAMES), { name: 'weft', argv });
    assert.equal(chooseEntry('/x/unknown', '/x/unknown', ['/x/unknown', '/x/unknown', 'nope'], NAMES).name, 'weft');
  });
});
