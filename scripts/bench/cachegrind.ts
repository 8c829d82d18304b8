// Reading cachegrind's output files: the instructions one process ran, for the load-independent
// benchmarks (pod-instructions). Instruction counts repeat for the same binary and input whatever else
// the machine runs, where wall and CPU times move by 2x with the load.
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';

/** One process's count: its command's program name and instructions, V8's hash-seed set-up left out. */
export interface ProcessCount {
  program: string;
  instructions: number;
}

/**
 * Parses one `cachegrind.out` text (format of valgrind 3.x: `cmd:`, `fn=` blocks of `line count`
 * rows, `summary:`). The instructions of functions named `detail::sprp` are subtracted: V8 seeds its
 * string hashes with a random-cost set-up (0.5-8 M per Node process), noise that says nothing of weft.
 */
export function parseCachegrind(text: string): ProcessCount {
  const cmd = /^cmd: (.*)$/m.exec(text)?.[1];
  const summary = /^summary: (\d+)/m.exec(text)?.[1];
  if (cmd === undefined || summary === undefined) throw new Error('not a cachegrind output file (no cmd: or summary: line)');
  let noise = 0;
  let inNoise = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('fn=')) inNoise = line.includes('detail::sprp');
    else if (inNoise && /^\d+ \d+$/.test(line)) noise += Number(line.split(' ')[1]);
  }
  return { program: basename(cmd.split(' ')[0] ?? '?'), instructions: Number(summary) - noise };
}

/** Every process of one run (one file per process, `--cachegrind-out-file=<dir>/%p`), with their sum. */
export function readCachegrindDir(dir: string): { total: number; processes: ProcessCount[] } {
  const processes = readdirSync(dir).sort().map((f) => parseCachegrind(readFileSync(join(dir, f), 'utf8')));
  return { total: processes.reduce((s, p) => s + p.instructions, 0), processes };
}

/** The valgrind prefix that writes one cachegrind file per process (children included) into `dir`. */
export function cachegrindPrefix(dir: string): string[] {
  return ['valgrind', '-q', '--tool=cachegrind', '--cache-sim=no', '--trace-children=yes', `--cachegrind-out-file=${dir}/%p`];
}
