// The `flannel` executable's commands with a delegate exec'd from CNI_PATH (a recording shell script):
// what reaches the delegate and what is stored (flannel's layout), DEL's forgiveness, CHECK as flannel.
// No root: nothing here opens a namespace.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPlugin } from '../../../../lib/cni/skel.ts';
import { flannelPlugin } from '../../../../plugins/flannel/plugin.ts';

const RESULT = '{"cniVersion":"1.0.0","interfaces":[{"name":"eth0"}],"ips":[{"address":"10.244.3.2/24","gateway":"10.244.3.1","interface":0}]}';

void describe('flannel commands (delegate exec\'d from CNI_PATH)', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'weft-flannel-cmd-'));
    // recorder: keeps each command's stdin; failer: refuses everything as a Go plugin would.
    writeFileSync(join(dir, 'recorder'), `#!/bin/sh\ncat > "$RECORD.$CNI_COMMAND"\n[ "$CNI_COMMAND" = ADD ] && printf '%s' '${RESULT}'\nexit 0\n`);
    writeFileSync(join(dir, 'failer'), '#!/bin/sh\ncat >/dev/null\nprintf \'{"code":7,"msg":"nope"}\'\nexit 1\n');
    // staller: a delegate whose DEL hit a stall (a held IPAM lock) and asks to be retried.
    writeFileSync(join(dir, 'staller'), '#!/bin/sh\ncat >/dev/null\nprintf \'{"code":11,"msg":"lock is held"}\'\nexit 1\n');
    for (const f of ['recorder', 'failer', 'staller']) chmodSync(join(dir, f), 0o755);
    writeFileSync(join(dir, 'subnet.env'), 'FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.3.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n');
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  function run(command: string, conf: Record<string, unknown> | string, id = 'c1'): ReturnType<typeof runPlugin> {
    const stdin = typeof conf === 'string' ? conf : JSON.stringify({ cniVersion: '1.0.0', name: 'cbr0', type: 'flannel', subnetFile: join(dir, 'subnet.env'), dataDir: join(dir, 'data'), ...conf });
    return runPlugin(flannelPlugin, {
      env: { CNI_COMMAND: command, CNI_CONTAINERID: id, CNI_NETNS: join(dir, 'no-such-netns'), CNI_IFNAME: 'eth0', CNI_PATH: dir, RECORD: join(dir, `rec-${id}`) },
      stdin: Buffer.from(stdin),
    });
  }

  it('ADD: the rendered delegate is stored under dataDir/<id> and is exactly what the delegate reads; its result is returned', async () => {
    const out = await run('ADD', { delegate: { type: 'recorder', hairpinMode: true }, runtimeConfig: { portMappings: [{ HostPort: 8080, ContainerPort: 80 }] } });
    assert.equal(out.exitCode, 0, out.stdout);
    assert.equal((JSON.parse(out.stdout) as { ips: Array<{ address: string }> }).ips[0]?.address, '10.244.3.2/24');
    const sent = readFileSync(join(dir, 'rec-c1.ADD'), 'utf8');
    assert.equal(readFileSync(join(dir, 'data', 'c1'), 'utf8'), sent);
    assert.deepEqual(JSON.parse(sent), {
      type: 'recorder', hairpinMode: true, name: 'cbr0', cniVersion: '1.0.0', ipMasq: false, mtu: 1450,
      ipam: { type: 'host-local', ranges: [[{ subnet: '10.244.3.0/24' }]], routes: [{ dst: '10.244.0.0/16' }] },
      runtimeConfig: { portMappings: [{ HostPort: 8080, ContainerPort: 80 }] },
    });
  });

  it('CHECK succeeds without looking, as flannel\'s; DEL replays the stored config and removes it', async () => {
    assert.equal((await run('CHECK', {}, 'never-added')).exitCode, 0);
    const del = await run('DEL', { delegate: { type: 'something-else' } });
    assert.equal(del.exitCode, 0, del.stdout);
    assert.equal(JSON.parse(readFileSync(join(dir, 'rec-c1.DEL'), 'utf8')).type, 'recorder', 'the stored config, not the new one');
    assert.equal(existsSync(join(dir, 'data', 'c1')), false);
  });

  it('DEL succeeds and forgets the container when the delegate fails, the stored file is not JSON, or there is none', async () => {
    writeFileSync(join(dir, 'data', 'c2'), JSON.stringify({ type: 'failer', name: 'cbr0', cniVersion: '1.0.0' }));
    writeFileSync(join(dir, 'data', 'c3'), '{not json');
    for (const id of ['c2', 'c3', 'never-added']) {
      const out = await run('DEL', {}, id);
      assert.equal(out.exitCode, 0, `${id}: ${out.stdout}`);
      assert.equal(existsSync(join(dir, 'data', id)), false);
    }
    assert.equal((await run('DEL', { dataDir: 'relative/dir', delegate: 7 })).exitCode, 0, 'a config ADD would refuse');
    assert.notEqual((await run('DEL', '{not json')).exitCode, 0, 'only unparsable stdin fails');
  });

  it('DEL whose delegate answers 11 (a stall): code 11 and the stored config is kept for the retry, which replays it', async () => {
    const stored = JSON.stringify({ type: 'staller', name: 'cbr0', cniVersion: '1.0.0' });
    writeFileSync(join(dir, 'data', 'c6'), stored);
    const out = await run('DEL', {}, 'c6');
    assert.equal(out.exitCode, 1, out.stdout);
    assert.equal((JSON.parse(out.stdout) as { code: number }).code, 11);
    assert.equal(readFileSync(join(dir, 'data', 'c6'), 'utf8'), stored, 'kept for the runtime\'s retry');
    writeFileSync(join(dir, 'data', 'c6'), JSON.stringify({ type: 'recorder', name: 'cbr0', cniVersion: '1.0.0' }));
    assert.equal((await run('DEL', {}, 'c6')).exitCode, 0);
    assert.equal(existsSync(join(dir, 'data', 'c6')), false);
  });

  it('ADD without subnet.env: code 11 with flannel\'s message, nothing stored; a failing delegate leaves nothing stored', async () => {
    const out = await run('ADD', { subnetFile: join(dir, 'missing.env') }, 'c4');
    const err = JSON.parse(out.stdout) as { code: number; msg: string };
    assert.equal(err.code, 11);
    assert.equal(err.msg, `failed to load flannel 'subnet.env' file: open ${join(dir, 'missing.env')}: no such file or directory. Check the flannel pod log for this node.`);
    const failed = await run('ADD', { delegate: { type: 'failer' } }, 'c5');
    assert.equal((JSON.parse(failed.stdout) as { code: number }).code, 7, 'the delegate\'s own error');
    assert.equal(existsSync(join(dir, 'data', 'c4')) || existsSync(join(dir, 'data', 'c5')), false);
  });
});
