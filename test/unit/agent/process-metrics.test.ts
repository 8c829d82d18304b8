import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Metrics } from '../../../agent/metrics.ts';
import { PM, defineProcessMetrics, parseProcStatus } from '../../../agent/process-metrics.ts';

test('parseProcStatus: VmRSS, VmHWM and RssAnon in bytes; missing fields stay undefined', () => {
  const text = 'Name:\tnode\nVmPeak:\t 1000 kB\nVmHWM:\t  140000 kB\nVmRSS:\t  120000 kB\nRssAnon:\t   80000 kB\nRssFile:\t   40000 kB\n';
  assert.deepEqual(parseProcStatus(text), { rss: 120000 * 1024, peak: 140000 * 1024, anon: 80000 * 1024 });
  assert.deepEqual(parseProcStatus('Name:\tnode\nVmRSSX:\t 5 kB\n'), {});
});

test('process metrics: a scrape carries RSS, peak, CPU, start time and every V8 space with plausible values', () => {
  const m = new Metrics();
  defineProcessMetrics(m);
  const text = m.format();
  const value = (name: string, labels = '') => {
    const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `));
    assert.ok(line !== undefined, `${name}${labels} in:\n${text}`);
    return Number(line.split(' ')[1]);
  };
  const rss = value(PM.rss);
  assert.ok(rss > 10 * 1048576 && rss < 4096 * 1048576, `rss ${rss}`);
  assert.ok(value(PM.peakRss) >= rss);
  assert.ok(value(PM.rssAnon) > 0 && value(PM.rssAnon) <= rss);
  assert.ok(value(PM.cpu) > 0);
  const start = value(PM.start);
  assert.ok(Math.abs(start - (Date.now() / 1000 - process.uptime())) < 5, `start ${start}`);
  assert.ok(value(PM.heapTotal, '{space="old"}') >= value(PM.heapUsed, '{space="old"}'));
  assert.ok(value(PM.heapTotal, '{space="new"}') > 0);
  assert.match(text, /# TYPE process_cpu_seconds_total counter/);
});
