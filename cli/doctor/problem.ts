// What a check reports: problems (what is wrong, and the fix) and facts (what it read), plus the
// report doctor prints as a table for people or one JSON document for machines. Pure, no I/O.

/** The fix of drift weftd converges on its own (a problem that persists means weftd is not running or failing). */
export const WEFTD_FIXES = 'weftd converges this on its next pass: if it persists, weftd is not running or failing (systemctl restart weftd; journalctl -u weftd)';

/**
 * A fix written for a systemd node in the words of a DaemonSet node (weftd is the weft pod's weftd
 * container, deploy/weft.yaml: namespace kube-weft, label app=weft): no systemctl or journalctl there.
 */
export function daemonSetFix(fix: string, node: string): string {
  const pod = `the weft pod on ${node} (kubectl -n kube-weft get pods -l app=weft -o wide --field-selector spec.nodeName=${node})`;
  return fix
    .replace(/systemctl enable --now weftd/g, `the weft DaemonSet starts weftd on every node: see ${pod}`)
    .replace(/systemctl restart weftd/g, `kubectl -n kube-weft delete pod -l app=weft --field-selector spec.nodeName=${node} (the DaemonSet starts it again)`)
    .replace(/systemctl status weftd/g, `kubectl -n kube-weft get pods -l app=weft -o wide --field-selector spec.nodeName=${node}`)
    .replace(/journalctl -u weftd(?: -n (\d+))?/g, (_m, n?: string) => `kubectl -n kube-weft logs -c weftd <${pod}>${n !== undefined ? ` --tail ${n}` : ''}`)
    .replace(/systemctl cat weftd/g, "kubectl -n kube-weft get ds weft -o yaml (the weftd container's args)");
}

/** One thing wrong on the node: which check found it, what it saw, what to do about it. */
export interface Problem {
  check: string;
  detail: string;
  fix: string;
}

/** A check's outcome: its name, what it read (facts), what is wrong, and why it was skipped if it was. */
export interface CheckResult {
  check: string;
  problems: Problem[];
  facts: Record<string, unknown>;
  skipped?: string;
}

/** The whole report; `ok` is true when no check found a problem. */
export interface Report {
  ok: boolean;
  problems: Problem[];
  checks: Array<{ check: string; status: 'ok' | 'problem' | 'skipped'; skipped?: string; facts: Record<string, unknown> }>;
}

/** Collects results into the report (order kept). */
export function buildReport(results: readonly CheckResult[]): Report {
  const problems = results.flatMap((r) => r.problems);
  const checks = results.map((r) => ({
    check: r.check,
    status: r.problems.length > 0 ? ('problem' as const) : r.skipped !== undefined ? ('skipped' as const) : ('ok' as const),
    ...(r.skipped !== undefined ? { skipped: r.skipped } : {}),
    facts: r.facts,
  }));
  return { ok: problems.length === 0, problems, checks };
}

/** The report as one line of JSON. */
export function formatReportJson(r: Report): string {
  return `${JSON.stringify(r)}\n`;
}

/** The report as a table for people: one line per check, then each problem with its fix. */
export function formatReportTable(r: Report): string {
  const width = Math.max(5, ...r.checks.map((c) => c.check.length));
  const lines = [`${'CHECK'.padEnd(width)}  STATUS   NOTE`];
  for (const c of r.checks) {
    const n = r.problems.filter((p) => p.check === c.check).length;
    const note = c.status === 'skipped' ? (c.skipped ?? '') : c.status === 'problem' ? `${n} problem${n === 1 ? '' : 's'}` : summarizeFacts(c.facts);
    lines.push(`${c.check.padEnd(width)}  ${c.status.padEnd(7)}  ${note}`);
  }
  if (r.problems.length > 0) {
    lines.push('', 'PROBLEMS');
    r.problems.forEach((p, i) => {
      lines.push(`${i + 1}. [${p.check}] ${p.detail}`, `   fix: ${p.fix}`);
    });
  }
  lines.push('', r.ok ? 'node is healthy' : `${r.problems.length} problem${r.problems.length === 1 ? '' : 's'} found`);
  return `${lines.join('\n')}\n`;
}

/** Scalar facts as "k=v" pairs, short enough for one table cell. */
function summarizeFacts(facts: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(facts)) {
    if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') parts.push(`${k}=${String(v)}`);
  }
  const text = parts.join(' ');
  return text.length > 100 ? `${text.slice(0, 97)}...` : text;
}
