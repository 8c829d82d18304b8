// Plugin logging: level from WEFT_LOG, written to stderr or appended to WEFT_LOG_FILE; never stdout,
// which belongs to the one JSON document of the CNI contract. A W3C trace context the runtime passes
// in the environment (TRACEPARENT, TRACESTATE: containerd and CRI-O set them when tracing is on)
// is written into every line, so a plugin's lines join the runtime's trace of the pod.
import { appendFileSync, writeSync } from 'node:fs';
import { isoNow } from '../time/format.ts';

/** Log levels, most verbose first; "off" silences everything. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'off';

const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3, off: 4 };

/** Where log lines go and from which level. */
export interface LogSink {
  level: LogLevel;
  file: string | undefined;
  /** ` traceparent="..." tracestate="..."` (each when set and well-formed), appended to every line. */
  trace: string;
}

// W3C Trace Context: version-traceid-parentid-flags in lower-case hex; an all-zero id is invalid.
const TRACEPARENT = /^[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;
// tracestate: printable ASCII list members, at most 512 characters (the recommended limit).
const TRACESTATE = /^[\x20-\x7e]{1,512}$/;

/** The trace fields of `env` for a log line (malformed values are left out, never half-logged). */
export function traceFields(env: Readonly<Record<string, string | undefined>>): string {
  const raw = env['TRACEPARENT'];
  // Most runs carry none: no regular expression compiled on their path.
  if (raw === undefined || raw === '') return '';
  const parent = raw.trim();
  if (!TRACEPARENT.test(parent) || parent.startsWith('ff')) return '';
  const state = (env['TRACESTATE'] ?? '').trim();
  return ` traceparent=${JSON.stringify(parent)}${TRACESTATE.test(state) ? ` tracestate=${JSON.stringify(state)}` : ''}`;
}

let sink: LogSink | undefined;
let tag = 'weft';

/** (Re)read WEFT_LOG and WEFT_LOG_FILE from `env`; called lazily on first use with process.env. */
export function configureLog(env: Readonly<Record<string, string | undefined>>, name?: string): LogSink {
  const lvl = (env['WEFT_LOG'] ?? '').toLowerCase();
  sink = { level: lvl in RANK ? (lvl as LogLevel) : 'warn', file: env['WEFT_LOG_FILE'] || undefined, trace: traceFields(env) };
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
  const line = `${isoNow()} ${tag}[${process.pid}] ${level} ${msg}${fmtFields(fields)}${s.trace}\n`;
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
