// Skeleton behaviour with injected io: the error table of issue 2, VERSION, about text, own-netns
// refusal, version rules per command, result formatting and prevResult decoding.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pluginMain, runPlugin } from '../../../../lib/cni/skel.ts';
import { MAX_STDIN_BYTES } from '../../../../lib/cni/stdin.ts';
import { addEnv, conf, expectError, fakePlugin, runJson } from './helpers.ts';

describe('skel error table (exactly one JSON document, exit 1)', () => {
  const cases: { name: string; env: Record<string, string | undefined>; stdin?: Buffer; code: number }[] = [
    { name: 'unknown CNI_COMMAND', env: addEnv({ CNI_COMMAND: 'FROB' }), code: 4 },
    { name: 'lower-case command', env: addEnv({ CNI_COMMAND: 'add' }), code: 4 },
    { name: 'stdin not JSON', env: addEnv(), stdin: Buffer.from('{"cniVersion":'), code: 6 },
    { name: 'stdin a JSON array', env: addEnv(), stdin: Buffer.from('[1]'), code: 6 },
    { name: 'cniVersion not a string', env: addEnv(), stdin: conf({ cniVersion: 1 }), code: 6 },
    { name: 'cniVersion 9.9.9', env: addEnv(), stdin: conf({ cniVersion: '9.9.9' }), code: 1 },
    { name: 'CNI_IFNAME of 16 bytes', env: addEnv({ CNI_IFNAME: 'a'.repeat(16) }), code: 4 },
    { name: 'CNI_IFNAME of 8 two-byte chars', env: addEnv({ CNI_IFNAME: 'é'.repeat(8) }), code: 4 },
    { name: "CNI_IFNAME with '/'", env: addEnv({ CNI_IFNAME: 'eth/0' }), code: 4 },
    { name: 'CNI_IFNAME ..', env: addEnv({ CNI_IFNAME: '..' }), code: 4 },
    { name: 'CHECK at 0.3.1', env: addEnv({ CNI_COMMAND: 'CHECK' }), stdin: conf({ cniVersion: '0.3.1' }), code: 1 },
    { name: 'CHECK without cniVersion (0.1.0)', env: addEnv({ CNI_COMMAND: 'CHECK' }), stdin: Buffer.from('{"name":"n","type":"t"}'), code: 1 },
    { name: 'GC at 1.0.0', env: { CNI_COMMAND: 'GC', CNI_PATH: '/x' }, stdin: conf({ cniVersion: '1.0.0' }), code: 1 },
    { name: 'STATUS at 0.4.0', env: { CNI_COMMAND: 'STATUS', CNI_PATH: '/x' }, stdin: conf({ cniVersion: '0.4.0' }), code: 1 },
    { name: 'missing CNI_CONTAINERID on ADD', env: addEnv({ CNI_CONTAINERID: undefined }), code: 4 },
    { name: 'empty CNI_CONTAINERID on ADD', env: addEnv({ CNI_CONTAINERID: '' }), code: 4 },
    { name: 'missing CNI_NETNS on ADD', env: addEnv({ CNI_NETNS: undefined }), code: 4 },
    { name: 'missing CNI_NETNS on CHECK', env: addEnv({ CNI_COMMAND: 'CHECK', CNI_NETNS: undefined }), code: 4 },
    { name: 'missing CNI_IFNAME on DEL', env: addEnv({ CNI_COMMAND: 'DEL', CNI_IFNAME: undefined }), code: 4 },
    { name: 'missing CNI_PATH on ADD', env: addEnv({ CNI_PATH: undefined }), code: 4 },
    { name: 'CNI_CONTAINERID ../x', env: addEnv({ CNI_CONTAINERID: '../x' }), code: 4 },
    { name: 'CNI_CONTAINERID with NUL', env: addEnv({ CNI_CONTAINERID: 'a\0b' }), code: 4 },
    { name: 'own netns', env: addEnv({ CNI_NETNS: '/proc/self/ns/net' }), code: 4 },
    { name: 'own netns on DEL', env: addEnv({ CNI_COMMAND: 'DEL', CNI_NETNS: '/proc/self/ns/net' }), code: 4 },
    { name: 'prevResult malformed', env: addEnv(), stdin: conf({ prevResult: { cniVersion: '1.1.0', ips: [{ address: 5 }] } }), code: 6 },
    { name: 'stdin larger than the cap', env: addEnv(), stdin: Buffer.alloc(MAX_STDIN_BYTES + 1, 0x20), code: 7 },
  ];
  for (const c of cases) {
    it(`${c.name} -> ${c.code}`, async () => {
      const plugin = fakePlugin();
      await expectError(plugin, c.env, c.stdin ?? conf(), c.code);
      assert.equal(plugin.calls.length, 0, 'handler must not run');
    });
  }

  it('names every missing variable', async () => {
    const doc = await expectError(fakePlugin(), { CNI_COMMAND: 'ADD' }, conf(), 4);
    assert.match(String(doc['msg']), /CNI_CONTAINERID,CNI_NETNS,CNI_IFNAME,CNI_PATH/);
  });

  it('labels errors with the config cniVersion when supported, else the newest', async () => {
    const d1 = await expectError(fakePlugin(), addEnv({ CNI_IFNAME: 'x'.repeat(20) }), conf({ cniVersion: '0.4.0' }), 4);
    assert.equal(d1['cniVersion'], '0.4.0');
    const d2 = await expectError(fakePlugin(), addEnv(), conf({ cniVersion: '9.9.9' }), 1);
    assert.equal(d2['cniVersion'], '1.1.0');
    assert.match(String(d2['details']), /9\.9\.9/);
  });

  it('refuses a version outside the plugin subset', async () => {
    await expectError(fakePlugin({ supportedVersions: ['1.0.0', '1.1.0'] }), addEnv(), conf({ cniVersion: '0.4.0' }), 1);
  });

  it('turns a thrown non-CNI error into 999 with the cause in details', async () => {
    const plugin = fakePlugin({ add: () => { throw Object.assign(new Error('boom'), { code: 'EBUSY' }); } });
    const doc = await expectError(plugin, addEnv({ WEFT_LOG: 'off' }), conf(), 999);
    assert.match(String(doc['details']), /EBUSY: boom/);
  });

  it('a missing ADD handler is code 4', async () => {
    await expectError(fakePlugin({ add: undefined }), addEnv(), conf(), 4);
  });
});

describe('skel success paths', () => {
  it('VERSION needs nothing else and answers the newest version', async () => {
    const { doc, exitCode } = await runJson(fakePlugin(), { CNI_COMMAND: 'VERSION' }, Buffer.alloc(0));
    assert.equal(exitCode, 0);
    assert.deepEqual(doc, { cniVersion: '1.1.0', supportedVersions: ['0.1.0', '0.2.0', '0.3.0', '0.3.1', '0.4.0', '1.0.0', '1.1.0'] });
  });

  it("VERSION echoes the config's cniVersion", async () => {
    const { doc } = await runJson(fakePlugin(), { CNI_COMMAND: 'VERSION' }, conf({ cniVersion: '0.4.0' }));
    assert.equal(doc['cniVersion'], '0.4.0');
  });

  it('no CNI_COMMAND prints the about text on stderr and exits 0', async () => {
    const out = await runPlugin(fakePlugin(), { env: {}, stdin: () => assert.fail('stdin must not be read') });
    assert.deepEqual([out.stdout, out.exitCode], ['', 0]);
    assert.match(out.stderr, /^fake 0\.1\.0\nCNI protocol versions supported: 0\.1\.0, .*1\.1\.0\n$/);
  });

  it('own netns is allowed with CNI_NETNS_OVERRIDE=1', async () => {
    const plugin = fakePlugin();
    const { exitCode, doc } = await runJson(plugin, addEnv({ CNI_NETNS: '/proc/self/ns/net', CNI_NETNS_OVERRIDE: '1' }), conf());
    assert.equal(exitCode, 0, JSON.stringify(doc));
    assert.equal(plugin.calls.length, 1);
  });

  it('ADD passes decoded arguments and formats the result for the config version', async () => {
    const plugin = fakePlugin();
    const { doc, exitCode } = await runJson(plugin, addEnv({ CNI_ARGS: 'IgnoreUnknown=1;X=y', CNI_PATH: '/a::/b' }), conf({ cniVersion: '0.3.1' }));
    assert.equal(exitCode, 0);
    assert.equal(doc['cniVersion'], '0.3.1');
    const ips = doc['ips'] as { version: string }[];
    assert.deepEqual(ips.map((i) => i.version), ['4', '6', '4']);
    const a = plugin.calls[0];
    assert.ok(a);
    assert.deepEqual([a.command, a.containerId, a.ifName, a.args, a.path, a.cniVersion], ['ADD', 'c0ffee', 'eth0', 'IgnoreUnknown=1;X=y', ['/a', '/b'], '0.3.1']);
    assert.equal(a.config.name, 'net');
    assert.equal(a.stdinData.toString(), conf({ cniVersion: '0.3.1' }).toString());
  });

  it('DEL without CNI_NETNS succeeds with empty stdout and decodes prevResult', async () => {
    const plugin = fakePlugin();
    const prev = { cniVersion: '0.4.0', ips: [{ version: '4', address: '10.0.0.2/24' }] };
    const out = await runPlugin(plugin, { env: addEnv({ CNI_COMMAND: 'DEL', CNI_NETNS: undefined }), stdin: conf({ cniVersion: '0.4.0', prevResult: prev }) });
    assert.deepEqual(out, { stdout: '', stderr: '', exitCode: 0 });
    assert.deepEqual(plugin.calls[0]?.prevResult, { ips: [{ address: '10.0.0.2/24' }] });
    assert.equal(plugin.calls[0]?.netns, '');
  });

  it('DEL tolerates a CNI_NETNS that does not exist', async () => {
    const out = await runPlugin(fakePlugin(), { env: addEnv({ CNI_COMMAND: 'DEL' }), stdin: conf() });
    assert.equal(out.exitCode, 0);
  });

  it('GC and STATUS at 1.1.0 need only CNI_PATH and print nothing', async () => {
    for (const cmd of ['GC', 'STATUS']) {
      const plugin = fakePlugin();
      const out = await runPlugin(plugin, { env: { CNI_COMMAND: cmd, CNI_PATH: '/x' }, stdin: conf() });
      assert.deepEqual(out, { stdout: '', stderr: '', exitCode: 0 });
      assert.equal(plugin.calls[0]?.command, cmd);
    }
  });

  it('CHECK at 0.4.0 runs the handler', async () => {
    const plugin = fakePlugin();
    const out = await runPlugin(plugin, { env: addEnv({ CNI_COMMAND: 'CHECK' }), stdin: conf({ cniVersion: '0.4.0' }) });
    assert.equal(out.exitCode, 0);
    assert.equal(plugin.calls.length, 1);
  });
});

describe('pluginMain', () => {
  it('writes one document to the injected stdout and exits with the code', async () => {
    const stdout: string[] = [];
    const stderr: string[] = [];
    const codes: number[] = [];
    await pluginMain(fakePlugin(), {
      env: addEnv({ CNI_COMMAND: 'BOGUS' }),
      stdin: () => conf(),
      stdout: (s) => stdout.push(s),
      stderr: (s) => stderr.push(s),
      exit: (c) => codes.push(c),
    });
    assert.equal(stdout.length, 1);
    assert.equal((JSON.parse(stdout[0] ?? '') as { code: number }).code, 4);
    assert.deepEqual([stderr, codes], [[], [1]]);
  });

  it('a stdin reader that throws is an I/O failure (5)', async () => {
    const stdout: string[] = [];
    await pluginMain(fakePlugin(), {
      env: addEnv(),
      stdin: () => { throw new Error('EIO'); },
      stdout: (s) => stdout.push(s),
      stderr: () => undefined,
      exit: () => undefined,
    });
    assert.equal((JSON.parse(stdout[0] ?? '') as { code: number }).code, 5);
  });
});

describe('skel: Go-style decoding of its own keys, cniVersion "" and DEL forgiveness', () => {
  it('cniVersion "" and absent are 0.1.0: the result is in the 0.1.0 form', async () => {
    for (const stdin of [conf({ cniVersion: '' }), Buffer.from('{"name":"n","type":"t"}')]) {
      const plugin = fakePlugin();
      const { doc } = await runJson(plugin, addEnv(), stdin);
      assert.equal(doc['cniVersion'], '0.1.0');
      assert.ok('ip4' in doc && !('ips' in doc), JSON.stringify(doc));
      assert.equal(plugin.calls[0]?.config.cniVersion, '0.1.0');
    }
  });

  it('CNIVersion and PrevResult keys are read as cniVersion and prevResult', async () => {
    const plugin = fakePlugin();
    const stdin = Buffer.from(JSON.stringify({ CNIVersion: '0.4.0', name: 'n', type: 't', PrevResult: { CNIVersion: '0.4.0', IPs: [{ Version: '4', Address: '10.0.0.2/24' }] } }));
    const { doc } = await runJson(plugin, addEnv(), stdin);
    assert.equal(doc['cniVersion'], '0.4.0');
    assert.deepEqual(plugin.calls[0]?.prevResult?.ips, [{ address: '10.0.0.2/24' }]);
  });

  it('DEL runs with an unsupported cniVersion or a broken prevResult; not with a non-object', async () => {
    for (const fields of [{ cniVersion: '9.9.9' }, { cniVersion: 5 }, { prevResult: { cniVersion: '1.1.0', ips: 'x' } }]) {
      const plugin = fakePlugin();
      const out = await runPlugin(plugin, { env: addEnv({ CNI_COMMAND: 'DEL' }), stdin: conf(fields) });
      assert.equal(out.exitCode, 0, out.stdout);
      assert.equal(plugin.calls.length, 1);
    }
    await expectError(fakePlugin(), addEnv({ CNI_COMMAND: 'DEL' }), Buffer.from('[1]'), 6);
  });

  it('a plugin with prevResultOptional ignores a malformed prevResult on ADD; others refuse it (6)', async () => {
    const bad = conf({ prevResult: { cniVersion: '1.1.0', ips: 'x' } });
    const lenient = fakePlugin({ prevResultOptional: true });
    const out = await runPlugin(lenient, { env: addEnv(), stdin: bad });
    assert.equal(out.exitCode, 0, out.stdout);
    assert.equal(lenient.calls[0]?.prevResult, undefined);
    await expectError(fakePlugin(), addEnv(), bad, 6);
  });
});
