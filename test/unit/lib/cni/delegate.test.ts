// Delegation: lookup on CNI_PATH, in-process for registered weft bundles, exec for anything else,
// with errors of the delegate preserved. Fake plugins live in a temp CNI_PATH dir.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { delegate, delegateAdd, delegateDel, delegateValidateAdd, isPluginNotFound, registerInProcess, unregisterInProcess } from '../../../../lib/cni/delegate.ts';
import { CniError, tryAgainLater } from '../../../../lib/cni/errors.ts';
import { findInPath, formatBundleHeader, readBundleHeader } from '../../../../lib/cni/find-plugin.ts';
import type { CmdArgs, Plugin } from '../../../../lib/cni/skel.ts';
import { conf } from './helpers.ts';

// Executed as a real process: echoes what it saw so the test can compare both paths.
const SPAWNED_BODY = `
const stdin = require('node:fs').readFileSync(0, 'utf8');
const conf = JSON.parse(stdin);
if (conf.fail === 'json') { process.stdout.write(JSON.stringify({ cniVersion: conf.cniVersion, code: 11, msg: 'busy', details: 'try later' })); process.exit(1); }
if (conf.fail === 'garbage') { process.stdout.write('panic: oops'); process.exit(2); }
if (process.env.CNI_COMMAND !== 'ADD') process.exit(0);
process.stdout.write(JSON.stringify({ cniVersion: conf.cniVersion, ips: [{ address: '10.99.99.99/24' }],
  dns: { domain: process.env.CNI_COMMAND, search: [conf.name, process.env.CNI_ARGS || ''] } }));
`;

let dir: string;
let env: Record<string, string>;
const seen: CmdArgs[] = [];

function inProcessPlugin(version: string): Plugin {
  return {
    name: 'fake-ipam',
    version,
    supportedVersions: ['0.4.0', '1.0.0', '1.1.0'],
    add: (a) => {
      seen.push(a);
      const c = a.config as { fail?: string };
      if (c.fail === 'json') throw tryAgainLater('busy', 'try later');
      return { ips: [{ address: '10.1.1.1/24' }], dns: { domain: a.command, search: [a.config.name, a.args] } };
    },
    del: (a) => void seen.push(a),
  };
}

describe('delegate', () => {
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'weft-t-cni-'));
    const empty = mkdtempSync(join(tmpdir(), 'weft-t-cni-empty-'));
    writeFileSync(join(dir, 'fake-ipam'), formatBundleHeader({ name: 'fake-ipam', version: '1.2.3' }) + SPAWNED_BODY, { mode: 0o755 });
    writeFileSync(join(dir, 'plain'), `#!/usr/bin/env node\n${SPAWNED_BODY}`, { mode: 0o755 });
    writeFileSync(join(dir, 'noexec'), '#!/bin/sh\nexit 0\n', { mode: 0o644 });
    env = { CNI_COMMAND: 'CHECK', CNI_CONTAINERID: 'c1', CNI_NETNS: '/var/run/netns/x', CNI_IFNAME: 'eth0', CNI_ARGS: 'IgnoreUnknown=1;K=V', CNI_PATH: `${empty}:${dir}` };
    rmSync(empty, { recursive: true });
  });
  after(() => {
    unregisterInProcess('fake-ipam');
    rmSync(dir, { recursive: true, force: true });
  });

  it('recognises a weft bundle from its header', () => {
    assert.deepEqual(readBundleHeader(join(dir, 'fake-ipam')), { name: 'fake-ipam', version: '1.2.3' });
    assert.equal(readBundleHeader(join(dir, 'plain')), undefined);
    assert.equal(readBundleHeader(join(dir, 'missing')), undefined);
  });

  it('finds executables only, and refuses path tricks', () => {
    assert.equal(findInPath('plain', ['/nonexistent', dir]), join(dir, 'plain'));
    assert.throws(() => findInPath('noexec', [dir]), (e: unknown) => isPluginNotFound(e));
    for (const t of ['../plain', 'a/b', '..', '', '.x']) {
      assert.throws(() => findInPath(t, [dir]), (e: unknown) => e instanceof CniError && e.code === 7, t);
    }
  });

  it('spawns an unregistered plugin with the same env (CNI_COMMAND changed) and stdin', async () => {
    const r = await delegateAdd('plain', conf({ cniVersion: '0.4.0', name: 'spawned' }), env);
    assert.deepEqual(r, { ips: [{ address: '10.99.99.99/24' }], dns: { domain: 'ADD', search: ['spawned', 'IgnoreUnknown=1;K=V'] } });
  });

  it('runs a registered bundle in-process with the same contract', async () => {
    registerInProcess('fake-ipam', inProcessPlugin('1.2.3'));
    seen.length = 0;
    const stdin = conf({ cniVersion: '1.0.0', name: 'inproc' });
    const r = await delegateAdd('fake-ipam', stdin, env);
    assert.deepEqual(r, { ips: [{ address: '10.1.1.1/24' }], dns: { domain: 'ADD', search: ['inproc', 'IgnoreUnknown=1;K=V'] } });
    assert.equal(seen.length, 1);
    assert.equal(seen[0]?.stdinData.toString(), stdin.toString());
    assert.equal(seen[0]?.env['CNI_COMMAND'], 'ADD');
    assert.equal(env['CNI_COMMAND'], 'CHECK', 'caller env untouched');
    await delegateDel('fake-ipam', stdin, env);
    assert.equal(seen[1]?.command, 'DEL');
  });

  it('looks the plugin up on CNI_PATH once per invocation (env object), again for another', async () => {
    registerInProcess('fake-ipam', inProcessPlugin('1.2.3'));
    const own = { ...env };
    const stdin = conf({ cniVersion: '1.0.0', name: 'once' });
    const decoded = { config: { cniVersion: '1.0.0', name: 'once', type: 't' }, cniVersion: '1.0.0' };
    await delegateValidateAdd('fake-ipam', stdin, own, decoded);
    const file = join(dir, 'fake-ipam');
    const kept = readFileSync(file);
    rmSync(file);
    try {
      assert.deepEqual((await delegateAdd('fake-ipam', stdin, own, decoded)).ips, [{ address: '10.1.1.1/24' }], 'same invocation: the file found before');
      await assert.rejects(delegateAdd('fake-ipam', stdin, { ...env }, decoded), (e: unknown) => isPluginNotFound(e), 'another invocation looks again');
    } finally {
      writeFileSync(file, kept, { mode: 0o755 });
    }
  });

  it('hands the decoded config to an in-process delegate and returns its Result object as made', async () => {
    const made = { ips: [{ address: '10.2.2.2/24' }] };
    const config = { cniVersion: '1.0.0', name: 'decoded-net', type: 'fake-ipam' };
    let got: CmdArgs | undefined;
    registerInProcess('fake-ipam', { ...inProcessPlugin('1.2.3'), add: (a) => ((got = a), made) });
    // The bytes say something else: the delegate must start from `decoded`, not parse them again.
    const r = await delegateAdd('fake-ipam', conf({ cniVersion: '1.0.0', name: 'from-bytes' }), env, { config, cniVersion: '1.0.0' });
    assert.equal(r, made, 'the very object the handler returned');
    assert.equal(got?.config, config);
    assert.equal(got?.command, 'ADD');
    assert.equal(got?.env['CNI_COMMAND'], 'ADD');
  });

  it('applies the version rules and throws the CniError on the decoded path', async () => {
    registerInProcess('fake-ipam', inProcessPlugin('1.2.3'));
    await assert.rejects(delegateAdd('fake-ipam', conf(), env, { config: { cniVersion: '0.3.1', name: 'n', type: 't' }, cniVersion: '0.3.1' }), (e: unknown) =>
      e instanceof CniError && e.code === 1);
    await assert.rejects(delegateAdd('fake-ipam', conf(), env, { config: { cniVersion: '1.0.0', name: 'n', type: 't', fail: 'json' } as never, cniVersion: '1.0.0' }), (e: unknown) =>
      e instanceof CniError && e.code === 11 && e.msg === 'busy');
    await assert.rejects(delegateAdd('fake-ipam', conf(), { ...env, CNI_IFNAME: '' }, { config: { cniVersion: '1.0.0', name: 'n', type: 't' }, cniVersion: '1.0.0' }), (e: unknown) =>
      e instanceof CniError && e.code === 4);
  });

  it('spawns a bundle whose version differs from the registered handler', async () => {
    registerInProcess('fake-ipam', inProcessPlugin('9.9.9'));
    seen.length = 0;
    const r = await delegateAdd('fake-ipam', conf({ cniVersion: '1.0.0' }), env);
    assert.equal(r.ips?.[0]?.address, '10.99.99.99/24');
    assert.equal(seen.length, 0);
  });

  it('preserves a delegate error code and msg on both paths', async () => {
    for (const version of ['1.2.3', '9.9.9']) {
      registerInProcess('fake-ipam', inProcessPlugin(version));
      await assert.rejects(delegateAdd('fake-ipam', conf({ fail: 'json' }), env), (e: unknown) =>
        e instanceof CniError && e.code === 11 && e.msg === 'busy' && e.details === 'try later');
    }
  });

  it('turns unparseable failure output into 999 with the exit status', async () => {
    await assert.rejects(delegate('plain', 'DEL', conf({ fail: 'garbage' }), env), (e: unknown) =>
      e instanceof CniError && e.code === 999 && /exit status 2/.test(e.details) && /panic: oops/.test(e.details));
  });

  it('DEL of a successful delegate resolves with nothing', async () => {
    assert.equal(await delegate('plain', 'DEL', conf(), env), undefined);
  });

  it('a missing plugin is code 100, recognisable by isPluginNotFound', async () => {
    await assert.rejects(delegateDel('host-local-missing', conf(), env), (e: unknown) => isPluginNotFound(e) && e instanceof CniError && e.code === 100);
  });
});
