// weftd's health is checked by default: the unit `weft install` writes gives weftd a loopback
// /healthz address and doctor reads it from there; without a unit (a DaemonSet node) doctor asks the
// address the DaemonSet and the install use; a unit without one is named as the reason to skip.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { normalizeDoctorOptions } from '../../../../cli/doctor/options.ts';
import { parseUnitFlags } from '../../../../cli/doctor/unit.ts';
import { renderWeftdUnit, WEFTD_METRICS_ADDR } from '../../../../cli/install/render.ts';
import { checkHealth } from '../../../../cli/doctor/check-health.ts';

describe('weftd health by default', () => {
  test('the installed unit serves /healthz on the loopback, and doctor reads that address from it', () => {
    const unit = renderWeftdUnit({ agentDir: '/usr/local/bin', weftConfDir: '/etc/weft', leaseSource: { kind: 'file' } });
    assert.match(WEFTD_METRICS_ADDR, /^127\.0\.0\.1:\d+$/);
    const flags = parseUnitFlags(unit, new Map());
    assert.equal(flags.metricsAddr, WEFTD_METRICS_ADDR);
    const o = normalizeDoctorOptions(flags, true);
    assert.equal(o.metricsAddr, WEFTD_METRICS_ADDR);
    assert.equal(o.metricsFrom, 'given');
  });

  test("the DaemonSet's weftd serves at the address doctor asks by default", () => {
    const yaml = readFileSync(join(import.meta.dirname, '..', '..', '..', '..', 'deploy', 'weft.yaml'), 'utf8');
    const args = /^\s+command: \["\/opt\/weft\/weft", "weftd"\]\n\s+args: (\[.*\])$/m.exec(yaml)?.[1];
    assert.ok(args !== undefined, 'the weftd container args in deploy/weft.yaml');
    const list = JSON.parse(args) as string[];
    assert.equal(list[list.indexOf('--metrics-addr') + 1], WEFTD_METRICS_ADDR);
  });

  test('no unit (a DaemonSet node): the default address; a unit without one: none, and the skip says why', () => {
    const d = normalizeDoctorOptions({}, false);
    assert.equal(d.metricsAddr, WEFTD_METRICS_ADDR);
    assert.equal(d.metricsFrom, 'default');
    const u = normalizeDoctorOptions({}, true);
    assert.equal(u.metricsAddr, undefined);
    assert.equal(u.metricsFrom, 'unit-has-none');
  });

  test("a flanneld unit's --healthz-ip/--healthz-port is weftd's health address", () => {
    assert.equal(parseUnitFlags('ExecStart=/usr/local/bin/weftd --healthz-ip=127.0.0.1 --healthz-port=9102', new Map()).metricsAddr, '127.0.0.1:9102');
    assert.equal(parseUnitFlags('ExecStart=/usr/local/bin/weftd --healthz-port 9102', new Map()).metricsAddr, '0.0.0.0:9102');
    assert.equal(parseUnitFlags('ExecStart=/usr/local/bin/weftd --healthz-port=0', new Map()).metricsAddr, undefined);
  });

  test('no answer at the default address names it as the installed default', () => {
    const r = checkHealth({ addr: WEFTD_METRICS_ADDR, defaulted: true, healthz: { error: 'connect ECONNREFUSED' }, metrics: null });
    assert.equal(r.problems.length, 1);
    assert.match(r.problems[0]?.detail ?? '', /does not answer at http:\/\/127\.0\.0\.1:9101\/healthz \(connect ECONNREFUSED\) \(the address weft install and the DaemonSet give weftd/);
  });
});
