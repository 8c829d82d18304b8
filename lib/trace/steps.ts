// Step timestamps for finding where an invocation's time goes: with WEFT_TRACE=1 in the environment,
// traceStep() records the time since the process started and the process's CPU time (user + system,
// all threads; system separately) at each named step, and the list goes to stderr at exit (stdout
// belongs to the result). Off by default: then a step costs one boolean test.
import { writeSync } from 'node:fs';

/** One recorded step: milliseconds since the process started, CPU milliseconds, of which system. */
export interface TraceStep {
  label: string;
  wallMs: number;
  cpuMs: number;
  sysMs: number;
}

// One list per process, shared through the global object: the standalone file's loader and the
// bundle body it runs each carry their own copy of this module.
const KEY = Symbol.for('weft.trace.steps');
type Holder = { [KEY]?: TraceStep[] | null };

function stepList(): TraceStep[] | null {
  const g = globalThis as Holder;
  let list = g[KEY];
  if (list === undefined) {
    list = process.env['WEFT_TRACE'] === '1' ? [] : null;
    g[KEY] = list;
    if (list !== null) {
      const steps = list;
      process.once('exit', () => {
        traceStep('exit');
        writeSync(2, formatTrace(steps));
      });
    }
  }
  return list;
}

/** Records step `label` when WEFT_TRACE=1 (any namespace: reads only clocks). */
export function traceStep(label: string): void {
  const list = stepList();
  if (list === null) return;
  const cpu = process.cpuUsage();
  list.push({ label, wallMs: process.uptime() * 1000, cpuMs: (cpu.user + cpu.system) / 1000, sysMs: cpu.system / 1000 });
}

/** One line per step: wall and CPU ms since start, then the wall / CPU / system deltas from the step before. */
export function formatTrace(list: readonly TraceStep[]): string {
  let prev: TraceStep = { label: '', wallMs: 0, cpuMs: 0, sysMs: 0 };
  const lines = list.map((s) => {
    const d = (k: 'wallMs' | 'cpuMs' | 'sysMs'): string => (s[k] - prev[k]).toFixed(2);
    const line = `weft-trace ${s.wallMs.toFixed(2)} ms cpu ${s.cpuMs.toFixed(2)} ms (+${d('wallMs')} / +${d('cpuMs')} / sys +${d('sysMs')}) ${s.label}`;
    prev = s;
    return line;
  });
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}
