// weftd's structured log: one JSON object per line on stderr ({"ts","level","msg",...fields}), so
// journald and log shippers can parse it without a grammar. Levels below --log-level are dropped.
import { isoNow } from '../lib/time/format.ts';

/** Severity of a log record, lowest first. */
export type AgentLogLevel = 'debug' | 'info' | 'warn' | 'error';

const RANK: Record<AgentLogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** The logger handed to every part of weftd. */
export interface AgentLog {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** True when records of `level` are written (to skip work done only for them). */
  enabled?(level: AgentLogLevel): boolean;
}

/** Errors become {error, cause}: JSON.stringify drops an Error's own fields otherwise. */
function plain(v: unknown): unknown {
  if (v instanceof Error) {
    const o: Record<string, unknown> = { error: v.message };
    const code = (v as { code?: unknown }).code;
    if (code !== undefined) o['code'] = code;
    if (v.cause !== undefined) o['cause'] = plain(v.cause);
    return o;
  }
  return v;
}

/** A JSON-lines logger writing to `write` (stderr by default). */
export function createAgentLog(level: AgentLogLevel = 'info', write: (line: string) => void = (l) => process.stderr.write(l)): AgentLog {
  const min = RANK[level];
  const emit = (lvl: AgentLogLevel, msg: string, fields?: Record<string, unknown>): void => {
    if (RANK[lvl] < min) return;
    const rec: Record<string, unknown> = { ts: isoNow(), level: lvl, msg };
    if (fields) for (const [k, v] of Object.entries(fields)) rec[k] = plain(v);
    write(`${JSON.stringify(rec)}\n`);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    enabled: (lvl) => RANK[lvl] >= min,
  };
}

/** Parses --log-level; throws naming the flag. */
export function normalizeLogLevel(v: string | undefined): AgentLogLevel {
  const s = v ?? 'info';
  if (!(s in RANK)) throw new Error(`--log-level ${JSON.stringify(s)} must be one of ${Object.keys(RANK).join(', ')}`);
  return s as AgentLogLevel;
}
