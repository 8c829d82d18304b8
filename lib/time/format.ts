// Timestamps as text without V8's date formatting (runs anywhere, no netns). Date.prototype.toISOString
// looks up the host's time zone through ICU on first use, even though its output is UTC: that pulls
// ICU's time zone tables and code in, about 1 MB of resident memory in a process that only wanted a
// log line's timestamp (measured with weftd: docs/weftd.md, "Memory"); toUTCString, which node:http
// uses for the Date header, does the same. The UTC getters do not.

const pad = (n: number, w: number): string => String(n).padStart(w, '0');

/** `ms` since the epoch as toISOString writes it (2026-12-01T21:00:00.123Z); throws on an invalid time, as toISOString does. */
export function formatIsoTime(ms: number): string {
  const d = new Date(ms);
  const y = d.getUTCFullYear();
  // Years outside 0..9999 take toISOString's expanded form (rare enough to pay for ICU).
  if (!(y >= 0 && y <= 9999)) return d.toISOString();
  return `${pad(y, 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}T${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}.${pad(d.getUTCMilliseconds(), 3)}Z`;
}

/** The current time as formatIsoTime writes it. */
export function isoNow(): string {
  return formatIsoTime(Date.now());
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `ms` as an HTTP date (RFC 9110 IMF-fixdate, as toUTCString writes it: Tue, 01 Dec 2026 21:00:00 GMT); for years 0-9999. */
export function formatHttpDate(ms: number): string {
  const d = new Date(ms);
  const y = d.getUTCFullYear();
  if (!(y >= 0 && y <= 9999)) return d.toUTCString();
  return `${DAYS[d.getUTCDay()] ?? ''}, ${pad(d.getUTCDate(), 2)} ${MONTHS[d.getUTCMonth()] ?? ''} ${pad(y, 4)} ${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)} GMT`;
}
