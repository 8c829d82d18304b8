// Plugin logging: level from WEFT_LOG, written to stderr or appended to WEFT_LOG_FILE; never stdout,
// which belongs to the one JSON document of the CNI contract.
import { appendFileSync, writeSync } from 'node:fs';
import { isoNow } from '../time/format.ts';

/** Log levels, most verbose first; "off" silences everything. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'off';

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3, off: 4 };

/** Where log lines go and from which level. */
export interface LogSink {
  level: LogLevel;
  file: string | undefined;
}

let sink: LogSink | undefined;
let tag = 'weft';

/** (Re)read WEFT_LOG and WEFT_LOG_FILE from `env`; called lazily on first use with process.env. */
export function configureLog(env: Readonly<Record<string, string | undefined>>, name?: string): LogSink {
  const lvl = (env['WEFT_LOG'] ?? '').toLowerCase();
  sink = { level: lvl in RANK ? (lvl as LogLevel) : 'warn', file: env['WEFT_LOG_FILE'] || undefined };
  if (name) tag = `weft-${name}`;
  return sink;
}

function fmtFields(fields: Record<string, unknown> | undefined): string {
  if (!fields) return '';
  return Object.entries(fields)
    .map(([k, v]) => ` ${k}=${typeof v === 'string' ? JSON.stringify(v) : v instanceof Error ? JSON.stringify(v.message) : JSON.stringify(v)}`)
    .join('');
}

function emit(level: Exclude<LogLevel, 'off'>, msg: string, fields?: Record<string, unknown>): void {
  const s = sink ?? configureLog(process.env);
  if (RANK[level] < RANK[s.level]) return;
  const line = `${isoNow()} ${tag}[${process.pid}] ${level} ${msg}${fmtFields(fields)}\n`;
  try {
    if (s.file) appendFileSync(s.file, line);
    else writeSync(2, line);
  } catch {
    // Logging must never turn a successful ADD into a failure.
  }
}

/** The plugin logger; all output goes to stderr or WEFT_LOG_FILE. */
export const log = {
  debug: (msg: string, fields?: Record<string, unknown>): void => emit('debug', msg, fields),
  info: (msg: string, fields?: Record<string, unknown>): void => emit('info', msg, fields),
  warn: (msg: string, fields?: Record<string, unknown>): void => emit('warn', msg, fields),
  error: (msg: string, fields?: Record<string, unknown>): void => emit('error', msg, fields),
};
