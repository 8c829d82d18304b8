// The pruning rules of /run/weft: code caches of other builds of exactly this bundle, unpacked
// addons of other builds; the newest other build and recent files kept. Pure, no root.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { listEntries, parseCacheName, removeAll, staleAddons, staleCodeCaches, KEEP_RECENT_MS } from '../../../../lib/sys/cache-prune.ts';

const NOW = 1_800_000_000_000;
const HOUR = KEEP_RECENT_MS;
const A = 'a'.repeat(16);
const B = 'b'.repeat(16);
const C = 'c'.repeat(16);
const D = 'd'.repeat(16);
const SHA = (x: string): string => x.repeat(4);
const cc = (bundle: string, body: string, cmd = 'ADD', node = 'v20.20.2', seen = ''): string => `weft-cc-${bundle}-${body}-${node}-x64-${cmd}.bin${seen}`;

void describe('code cache pruning', () => {
  void it('parses the names cacheFileName writes, the bundle exactly', () => {
    assert.deepEqual(parseCacheName(cc('flannel-udp', A)), { bundle: 'flannel-udp', body: A, node: 'v20.20.2' });
    assert.deepEqual(parseCacheName(cc('sea-flannel', A, 'VERSION', 'v20.20.2', '.seen')), { bundle: 'sea-flannel', body: A, node: 'v20.20.2' });
    assert.equal(parseCacheName('weft_sys-0123456789abcdef.node'), null);
  });

  void it("never touches another bundle's caches whose name starts with this bundle's (flannel vs flannel-udp)", () => {
    const entries = [cc('flannel-udp', B), cc('flannel-vxlan', C), cc('sea-flannel', D)].map((name) => ({ name, mtimeMs: NOW - 10 * HOUR }));
    assert.deepEqual(staleCodeCaches(entries, 'flannel', SHA(A), 'v20.20.2', NOW), []);
  });

  void it('removes builds older than the newest other one even when they are recent-ish, keeps this build and the newest other', () => {
    const entries = [
      { name: cc('bridge', A), mtimeMs: NOW },
      { name: cc('bridge', B, 'ADD'), mtimeMs: NOW - 2 * HOUR },
      { name: cc('bridge', B, 'DEL'), mtimeMs: NOW - 2 * HOUR },
      { name: cc('bridge', C, 'ADD'), mtimeMs: NOW - 3 * HOUR },
      { name: cc('bridge', C, 'CHECK', 'v20.20.2', '.seen'), mtimeMs: NOW - 3 * HOUR },
      { name: cc('bridge', D, 'ADD'), mtimeMs: NOW - 30 * 60_000 },
    ];
    // D is the newest other build (kept), B and C are older and over an hour old.
    assert.deepEqual(staleCodeCaches(entries, 'bridge', SHA(A), 'v20.20.2', NOW).sort(), [cc('bridge', B, 'ADD'), cc('bridge', B, 'DEL'), cc('bridge', C, 'ADD'), cc('bridge', C, 'CHECK', 'v20.20.2', '.seen')].sort());
  });

  void it('keeps every build touched within the hour (an upgrade in progress)', () => {
    const entries = [cc('bridge', B), cc('bridge', C)].map((name, i) => ({ name, mtimeMs: NOW - (10 + i) * 60_000 }));
    assert.deepEqual(staleCodeCaches(entries, 'bridge', SHA(A), 'v20.20.2', NOW), []);
  });

  void it("counts this body under another Node version as another build", () => {
    const entries = [{ name: cc('bridge', A, 'ADD', 'v18.0.0'), mtimeMs: NOW - 5 * HOUR }, { name: cc('bridge', B), mtimeMs: NOW - 4 * HOUR }];
    assert.deepEqual(staleCodeCaches(entries, 'bridge', SHA(A), 'v20.20.2', NOW), [cc('bridge', A, 'ADD', 'v18.0.0')]);
  });
});

void describe('addon pruning', () => {
  void it('keeps the current file, the three newest others and recent ones; removes older builds', () => {
    const names = [A, B, C, D, 'e'.repeat(16), 'f'.repeat(16)].map((h) => `weft_sys-${h}.node`);
    const entries = names.map((name, i) => ({ name, mtimeMs: NOW - (i + 2) * HOUR }));
    assert.deepEqual(staleAddons([...entries, { name: 'weft-cc-bridge.bin', mtimeMs: 0 }], names[0] as string, NOW), [names[4], names[5]]);
  });
});

void describe('pruning a real directory', () => {
  void it('lists with mtimes and removes what the planner names (old builds of the bundle only)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'weft-prune-'));
    try {
      const old = [cc('bridge', B), cc('bridge', C)];
      for (const n of [...old, cc('bridge', A), cc('bridge-x', B)]) writeFileSync(join(dir, n), 'x');
      utimesSync(join(dir, old[0] as string), new Date(Date.now() - 3 * HOUR), new Date(Date.now() - 3 * HOUR));
      utimesSync(join(dir, old[1] as string), new Date(Date.now() - 2 * HOUR), new Date(Date.now() - 2 * HOUR));
      utimesSync(join(dir, cc('bridge-x', B)), new Date(Date.now() - 9 * HOUR), new Date(Date.now() - 9 * HOUR));
      removeAll(dir, staleCodeCaches(listEntries(dir), 'bridge', SHA(A), 'v20.20.2', Date.now()));
      assert.deepEqual(readdirSync(dir).sort(), [cc('bridge', A), cc('bridge', C), cc('bridge-x', B)].sort());
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
