// weftd's own resource use on /metrics, under the names Prometheus' client libraries give them
// (process_*, nodejs_*), so dashboards built for Go daemons (flanneld, kube-proxy export process_*)
// and for Node services read it unchanged; plus the peak RSS (VmHWM), which a scrape interval would
// miss. Read at scrape time only (weftd's netns; /proc/self is the process's own).
import { readFileSync } from 'node:fs';
import { getHeapSpaceStatistics } from 'node:v8';
import type { Metrics } from './metrics.ts';

/** Metric names (tests and docs agree on them). */
export const PM = {
  rss: 'process_resident_memory_bytes',
  peakRss: 'weftd_peak_resident_memory_bytes',
  rssAnon: 'weftd_resident_anonymous_memory_bytes',
  cpu: 'process_cpu_seconds_total',
  start: 'process_start_time_seconds',
  heapTotal: 'nodejs_heap_space_size_total_bytes',
  heapUsed: 'nodejs_heap_space_size_used_bytes',
  external: 'nodejs_external_memory_bytes',
} as const;

/** The kB fields of /proc/self/status weftd reports, in bytes (absent fields: undefined). Pure. */
export function parseProcStatus(text: string): { rss?: number; peak?: number; anon?: number } {
  const kb = (k: string) => {
    const m = new RegExp(`^${k}:\\s+(\\d+) kB$`, 'm').exec(text);
    return m === null ? undefined : Number(m[1]) * 1024;
  };
  const out: { rss?: number; peak?: number; anon?: number } = {};
  const rss = kb('VmRSS');
  const peak = kb('VmHWM');
  const anon = kb('RssAnon');
  if (rss !== undefined) out.rss = rss;
  if (peak !== undefined) out.peak = peak;
  if (anon !== undefined) out.anon = anon;
  return out;
}

/** Declares the process metrics on `m` and refreshes them before each scrape. */
export function defineProcessMetrics(m: Metrics): void {
  m.define(PM.rss, 'gauge', 'Resident set size in bytes.');
  m.define(PM.peakRss, 'gauge', 'Largest resident set size since weftd started (VmHWM), in bytes.');
  m.define(PM.rssAnon, 'gauge', 'Anonymous resident memory in bytes (the resident set less the node binary and other mapped files).');
  m.define(PM.cpu, 'counter', 'User and system CPU time spent, in seconds.');
  m.define(PM.start, 'gauge', 'Start time of the process since the Unix epoch, in seconds.');
  m.define(PM.heapTotal, 'gauge', 'V8 heap space committed, by space, in bytes.');
  m.define(PM.heapUsed, 'gauge', 'V8 heap space used, by space, in bytes.');
  m.define(PM.external, 'gauge', 'Memory of C++ objects bound to JavaScript objects (buffers, typed arrays), in bytes.');
  m.set(PM.start, Math.round(performance.timeOrigin / 10) / 100);
  m.addCollector(() => {
    let status = '';
    try {
      status = readFileSync('/proc/self/status', 'utf8');
    } catch {
      // Not Linux, or /proc not mounted: the resident set comes from Node alone.
    }
    const st = parseProcStatus(status);
    m.set(PM.rss, st.rss ?? process.memoryUsage.rss());
    if (st.peak !== undefined) m.set(PM.peakRss, st.peak);
    if (st.anon !== undefined) m.set(PM.rssAnon, st.anon);
    const c = process.cpuUsage();
    m.set(PM.cpu, (c.user + c.system) / 1e6);
    for (const s of getHeapSpaceStatistics()) {
      m.set(PM.heapTotal, s.space_size, { space: s.space_name.replace(/_space$/, '') });
      m.set(PM.heapUsed, s.space_used_size, { space: s.space_name.replace(/_space$/, '') });
    }
    m.set(PM.external, process.memoryUsage().external);
  });
}
