// The plugins' log lines carry the runtime's W3C trace context (TRACEPARENT, TRACESTATE from the
// environment), well-formed values only. No root.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { configureLog, log, traceFields } from '../../../../lib/cni/log.ts';

const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

void describe('plugin log trace context', () => {
  void it('writes traceparent and tracestate into every line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'weft-log-'));
    try {
      const file = join(dir, 'log');
      configureLog({ WEFT_LOG: 'debug', WEFT_LOG_FILE: file, TRACEPARENT: TP, TRACESTATE: 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7' }, 'bridge');
      log.debug('delegating in-process', { type: 'host-local' });
      log.error('ADD failed unexpectedly');
      const lines = readFileSync(file, 'utf8').trim().split('\n');
      assert.equal(lines.length, 2);
      for (const l of lines) assert.ok(l.endsWith(` traceparent="${TP}" tracestate="congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"`), l);
      assert.match(lines[0] ?? '', / weft-bridge\[\d+\] debug delegating in-process type="host-local" traceparent=/);
    } finally {
      configureLog({});
      rmSync(dir, { recursive: true, force: true });
    }
  });

  void it('adds nothing without TRACEPARENT, and tracestate only with a valid traceparent', () => {
    assert.equal(traceFields({}), '');
    assert.equal(traceFields({ TRACESTATE: 'a=b' }), '');
    assert.equal(traceFields({ TRACEPARENT: TP }), ` traceparent="${TP}"`);
  });

  void it('leaves out malformed values (no log injection, no all-zero ids, no version ff)', () => {
    for (const bad of ['00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7', `${TP}\nforged line`, '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01', 'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01']) {
      assert.equal(traceFields({ TRACEPARENT: bad }), '', bad);
    }
    assert.equal(traceFields({ TRACEPARENT: TP, TRACESTATE: 'a=b\nforged' }), ` traceparent="${TP}"`);
  });
});
