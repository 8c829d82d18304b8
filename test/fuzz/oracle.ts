// Judges one fuzz case's output: exactly one JSON document on stdout, exit 1 with a CNI error of a
// fitting code (or exit 0 with a result where the case allows success), nothing stray, no 999.
import type { FuzzCase } from './cases.ts';
import type { CaseOutput } from './worker-client.ts';

/** The verdict: `problem` is undefined when the output is right; `ok` tells whether the plugin succeeded. */
export interface Verdict {
  ok: boolean;
  code?: number;
  problem?: string;
}

function parseOne(stdout: string): { doc?: unknown; problem?: string } {
  try {
    return { doc: JSON.parse(stdout) as unknown };
  } catch (e) {
    return { problem: `stdout is not one JSON document (${(e as Error).message}): ${JSON.stringify(stdout.slice(0, 300))}` };
  }
}

/** Checks `out` against `c.expect`. */
export function judge(c: FuzzCase, out: CaseOutput): Verdict {
  if (out.threw !== undefined) return { ok: false, problem: `escaped runPlugin: ${out.threw.slice(0, 500)}` };
  if (out.stray.length > 0) return { ok: false, problem: `stray stdout lines: ${JSON.stringify(out.stray.slice(0, 3))}` };
  const command = c.env['CNI_COMMAND'];
  if (out.exitCode === 0) {
    if (!c.expect.ok) return { ok: true, problem: `succeeded, expected an error with code ${c.expect.codes.join('|')}; stdout ${out.stdout.slice(0, 300)}` };
    // ADD prints a result; DEL/CHECK/GC/STATUS print nothing on success (spec "Output").
    if (command !== 'ADD') return out.stdout === '' ? { ok: true } : { ok: true, problem: `${command} success printed ${JSON.stringify(out.stdout.slice(0, 200))}` };
    const p = parseOne(out.stdout);
    if (p.problem !== undefined) return { ok: true, problem: p.problem };
    const r = p.doc as { cniVersion?: unknown; ips?: unknown } | null;
    if (typeof r !== 'object' || r === null || typeof r.cniVersion !== 'string') return { ok: true, problem: `ADD result without cniVersion: ${out.stdout.slice(0, 300)}` };
    return { ok: true };
  }
  if (out.exitCode !== 1) return { ok: false, problem: `exit status ${out.exitCode} (want 1 on error); stderr ${out.stderr.slice(-500)}` };
  const p = parseOne(out.stdout);
  if (p.problem !== undefined) return { ok: false, problem: `${p.problem}; stderr ${JSON.stringify(out.stderr.slice(-300))}` };
  const e = p.doc as { cniVersion?: unknown; code?: unknown; msg?: unknown } | null;
  if (typeof e !== 'object' || e === null || typeof e.code !== 'number' || typeof e.msg !== 'string' || typeof e.cniVersion !== 'string') {
    return { ok: false, problem: `error document malformed: ${out.stdout.slice(0, 300)}` };
  }
  if (!c.expect.codes.includes(e.code)) {
    return { ok: false, code: e.code, problem: `code ${e.code} (${e.msg}), expected ${c.expect.ok ? 'success or ' : ''}${c.expect.codes.join('|') || '(success)'}: ${out.stdout.slice(0, 400)}` };
  }
  return { ok: false, code: e.code };
}
