// Every built executable answers --version (exit 0, its name and version), and a usage error is
// exit 2 in weft, each of its subcommands and weftd (commander's default would be 1). The bundles
// and the standalone file (dispatching by its first argument) alike.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { ENTRIES } from '../../../cli/entries.ts';
import { WEFT_VERSION } from '../../../lib/version.ts';
import { DIST_BIN, runCmd, SEA_WEFT } from './helpers.ts';

void describe('executables: --version and usage errors', () => {
  for (const e of ENTRIES) {
    void test(`${e.name} --version`, async () => {
      const r = await runCmd([join(DIST_BIN, e.name), '--version'], { ...process.env, CNI_COMMAND: '' });
      assert.equal(r.code, 0, r.stderr);
      // The plugins print the CNI about text (name, version, CNI versions) on stderr, as a bare call does.
      assert.match(r.stdout + r.stderr, new RegExp(`^${e.name} ${WEFT_VERSION.replace(/\./g, '\\.')}$`, 'm'));
    });
  }

  void test('the standalone file: weft --version, weft weftd --version', { skip: existsSync(SEA_WEFT) ? false : 'dist/sea/weft not built' }, async () => {
    for (const [args, want] of [[['--version'], `weft ${WEFT_VERSION}`], [['weftd', '--version'], `weftd ${WEFT_VERSION}`]] as const) {
      const r = await runCmd([SEA_WEFT, ...args]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout.trim(), want);
    }
  });

  void test('weftd --help names each backend it drives, udp among them', async () => {
    const r = await runCmd([join(DIST_BIN, 'weftd'), '--help']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /vxlan, host-gw or udp\s+data plane/);
  });

  const usage: Array<[string, string[]]> = [
    ['weft', ['--bogus']], ['weft', ['no-such-command']], ['weft', ['install', '--bogus']], ['weft', ['uninstall', '--bogus']],
    ['weft', ['doctor', '--bogus']], ['weft', ['install', '--backend']], ['weftd', ['--bogus']], ['weftd', ['--net-conf']],
  ];
  for (const [exe, args] of usage) {
    void test(`${exe} ${args.join(' ')} exits 2 and says why`, async () => {
      const r = await runCmd([join(DIST_BIN, exe), ...args]);
      assert.equal(r.code, 2, r.stdout + r.stderr);
      assert.match(r.stderr, /error: (unknown option|unknown command|option .* argument missing)/);
    });
  }
});
