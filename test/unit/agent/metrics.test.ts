import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Metrics, parseListenAddr } from '../../../agent/metrics.ts';
import { createAgentLog, normalizeLogLevel } from '../../../agent/log.ts';

void describe('Metrics', () => {
  it('formats the Prometheus text format with escaped, sorted labels', () => {
    const m = new Metrics();
    m.define('x_total', 'counter', 'Things.');
    m.define('y', 'gauge', 'Level.');
    m.inc('x_total', { b: '2', a: 'q"\\' });
    m.inc('x_total', { b: '2', a: 'q"\\' }, 2);
    m.set('y', 1.5);
    assert.equal(m.format(), '# HELP x_total Things.\n# TYPE x_total counter\nx_total{a="q\\"\\\\",b="2"} 3\n# HELP y Level.\n# TYPE y gauge\ny 1.5\n');
    assert.throws(() => m.inc('nope'), /not defined/);
  });

  it('parses listen addresses and names the flag on errors', () => {
    assert.deepEqual(parseListenAddr('127.0.0.1:9101'), { host: '127.0.0.1', port: 9101 });
    assert.deepEqual(parseListenAddr(':9101'), { host: '0.0.0.0', port: 9101 });
    assert.deepEqual(parseListenAddr('[::1]:80'), { host: '::1', port: 80 });
    assert.throws(() => parseListenAddr('9101'), /--metrics-addr "9101"/);
    assert.throws(() => parseListenAddr('a:99999'), /--metrics-addr/);
  });
});

void describe('agent log', () => {
  it('writes one JSON object per line, drops lower levels, flattens errors', () => {
    const lines: string[] = [];
    const log = createAgentLog('info', (l) => lines.push(l));
    log.debug('hidden');
    log.warn('w', { error: Object.assign(new Error('boom', { cause: new Error('root') }), { code: 'EX' }), n: 1 });
    assert.equal(lines.length, 1);
    const rec = JSON.parse(lines[0] ?? '') as Record<string, unknown>;
    assert.equal(rec['level'], 'warn');
    assert.deepEqual(rec['error'], { error: 'boom', code: 'EX', cause: { error: 'root' } });
    assert.throws(() => normalizeLogLevel('loud'), /--log-level "loud"/);
  });
});
