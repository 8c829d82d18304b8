// formatIsoTime and formatHttpDate must write exactly what toISOString and toUTCString write.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatHttpDate, formatIsoTime, isoNow } from '../../../../lib/time/format.ts';

void describe('formatIsoTime', () => {
  it('matches toISOString across the years, leap days and millisecond edges', () => {
    const samples = [0, 1, 999, 951782400000, 951868799999, 1_733_000_000_123, 4102444800000, 253402300799999, -1, -62167219200000, Date.now()];
    for (let t = -2e12; t < 4e12; t += 7_777_777_777) samples.push(Math.floor(t));
    for (const t of samples) assert.equal(formatIsoTime(t), new Date(t).toISOString(), String(t));
  });
  it('takes the expanded form outside years 0-9999 and refuses an invalid time, as toISOString', () => {
    assert.equal(formatIsoTime(253402300800000), '+010000-01-01T00:00:00.000Z');
    assert.equal(formatIsoTime(-62167219200001), '-000001-12-31T23:59:59.999Z');
    assert.throws(() => formatIsoTime(NaN), RangeError);
  });
  it('formatHttpDate matches toUTCString', () => {
    for (let t = -6e13; t < 2.5e14; t += 9_876_543_211) assert.equal(formatHttpDate(t), new Date(t).toUTCString(), String(t));
    assert.equal(formatHttpDate(Date.UTC(2026, 11, 1, 21, 0, 0)), 'Tue, 01 Dec 2026 21:00:00 GMT');
  });
  it('isoNow is the current time', () => {
    const before = Date.now();
    const t = Date.parse(isoNow());
    assert.ok(t >= before - 1 && t <= Date.now(), `${t} within [${before}, now]`);
  });
});
