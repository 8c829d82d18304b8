// What a reconcile pass waited behind, for the debug log (runs in weftd's process, no netns): one
// line per pass with its slices, one per long garbage collection and one per stall of the event loop
// (with the CPU weftd spent in it), so that a slow join can be explained from the log alone: a full
// pass's slice, other work holding the loop, a GC pause, or a machine too busy to schedule weftd.
import { PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import type { AgentLog } from './log.ts';
import type { PassTiming } from './reconcile/loop.ts';

/** Collections shorter than this are not logged (ms): scavenges take 1-5 ms and come by the hundred. */
const GC_LOG_MIN_MS = 10;

/** In debug, a timer this often (ms) that logs when it fires STALL_LOG_MS or more late: the event loop was held. */
const STALL_PROBE_MS = 20;
const STALL_LOG_MS = 50;

const KINDS: Record<number, string> = { 1: 'scavenge', 2: 'mark-compact', 4: 'incremental', 8: 'weak-callbacks', 16: 'minor-mark-sweep' };

const ms = (x: number): number => Math.round(x * 10) / 10;

/** The debug record of one pass (pure). */
export function passRecord(t: PassTiming): Record<string, unknown> {
  return {
    trigger: t.why, sliced: t.sliced, lateMs: ms(t.lateMs), slicesMs: t.slicesMs.map(ms),
    busyMs: ms(t.slicesMs.reduce((a, b) => a + b, 0)), wallMs: ms(t.wallMs), interleaved: t.interleaved,
  };
}

/** Logs each pass at debug, and collections of GC_LOG_MIN_MS or more while debug is on; returns the stopper. */
export function logPassTiming(log: AgentLog): { onPass: (t: PassTiming) => void; stop: () => void } {
  const debug = log.enabled?.('debug') ?? false;
  let obs: PerformanceObserver | undefined;
  let probe: NodeJS.Timeout | undefined;
  if (debug) {
    // cpuMs near lateMs: weftd itself held the loop; far below: the process waited for a core.
    let due = performance.now() + STALL_PROBE_MS;
    let cpu = process.cpuUsage();
    probe = setInterval(() => {
      const now = performance.now();
      const late = now - due;
      if (late >= STALL_LOG_MS) {
        const d = process.cpuUsage(cpu);
        log.debug('loop stall', { lateMs: ms(late), cpuMs: ms((d.user + d.system) / 1000) });
      }
      due = now + STALL_PROBE_MS;
      cpu = process.cpuUsage();
    }, STALL_PROBE_MS).unref();
    obs = new PerformanceObserver((list) => {
      for (const e of list.getEntries() as Array<PerformanceEntry & { detail?: { kind?: number } }>) {
        if (e.duration < GC_LOG_MIN_MS) continue;
        log.debug('gc', { kind: KINDS[e.detail?.kind ?? 0] ?? String(e.detail?.kind), ms: ms(e.duration), startedAgoMs: ms(performance.now() - e.startTime) });
      }
    });
    obs.observe({ entryTypes: ['gc'] });
  }
  return {
    onPass: (t) => { if (debug) log.debug('pass', passRecord(t)); },
    stop: () => { obs?.disconnect(); clearInterval(probe); },
  };
}
