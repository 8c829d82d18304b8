// A reader for the block-style YAML that kubeconfig writers produce (client-go's `kubectl config`,
// kubeadm's admin.conf, k3s, kind): nested mappings and sequences by indentation, plain and quoted
// scalars, comments, `{}` and `[]`. Runs anywhere (no netns). It exists because the full YAML library
// costs weftd about 0.3-0.5 MB of resident code for a file of twenty lines read once at start
// (docs/weftd.md, "Memory"). Anything outside that subset (block scalars, anchors, tags, flow
// collections with content, multi-line plain scalars, several documents) throws UnsupportedYaml, and
// the caller hands the text to the full library instead, so no valid kubeconfig is refused here.

/** The text uses YAML this reader does not handle; parse it with a full YAML parser. */
export class UnsupportedYaml extends Error {
  constructor(line: number, what: string) {
    super(`line ${line}: ${what}`);
    this.name = 'UnsupportedYaml';
  }
}

interface Line {
  no: number;
  indent: number;
  text: string;
}

/** Non-blank, non-comment lines with their indentation. */
function splitLines(src: string): Line[] {
  const out: Line[] = [];
  const raw = src.replace(/^\uFEFF/, '').split('\n');
  raw.forEach((r, i) => {
    const l = r.replace(/\r$/, '');
    const body = l.trimStart();
    if (body === '' || body.startsWith('#')) return;
    const lead = l.slice(0, l.length - body.length);
    if (lead.includes('\t')) throw new UnsupportedYaml(i + 1, 'tab in indentation');
    out.push({ no: i + 1, indent: lead.length, text: body.trimEnd() });
  });
  if (out[0]?.indent === 0 && out[0].text === '---') out.shift();
  if (out.some((l) => l.indent === 0 && (l.text === '---' || l.text === '...' || l.text.startsWith('%')))) {
    throw new UnsupportedYaml(out.find((l) => l.indent === 0 && /^(---|\.\.\.|%)/.test(l.text))?.no ?? 0, 'directives or several documents');
  }
  return out;
}

/** Drops a trailing ` # comment` outside quotes. */
function stripComment(s: string): string {
  let q: string | undefined;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (q !== undefined) {
      if (c === '\\' && q === '"') i++;
      else if (c === q) q = undefined;
    } else if (c === '"' || c === "'") {
      q = c;
    } else if (c === '#' && (i === 0 || s[i - 1] === ' ')) {
      return s.slice(0, i).trimEnd();
    }
  }
  return s;
}

const ESCAPES: Record<string, string> = { '0': '\0', a: '\x07', b: '\b', t: '\t', n: '\n', v: '\v', f: '\f', r: '\r', e: '\x1b', ' ': ' ', '"': '"', '/': '/', '\\': '\\' };

/** One scalar as YAML 1.2's core schema reads it (the schema of the full library's default). */
function parseScalar(s: string, no: number): unknown {
  if (s.startsWith("'")) {
    if (s.length < 2 || !s.endsWith("'") || s.slice(1, -1).replace(/''/g, '').includes("'")) throw new UnsupportedYaml(no, 'single-quoted scalar');
    return s.slice(1, -1).replace(/''/g, "'");
  }
  if (s.startsWith('"')) {
    if (s.length < 2 || !s.endsWith('"')) throw new UnsupportedYaml(no, 'multi-line double-quoted scalar');
    const body = s.slice(1, -1);
    let out = '';
    for (let i = 0; i < body.length; i++) {
      const c = body[i] as string;
      if (c === '"') throw new UnsupportedYaml(no, 'text after a double-quoted scalar');
      if (c !== '\\') { out += c; continue; }
      const e = body[++i] ?? '';
      if (e in ESCAPES) { out += ESCAPES[e]; continue; }
      const len = e === 'x' ? 2 : e === 'u' ? 4 : e === 'U' ? 8 : 0;
      const hex = body.slice(i + 1, i + 1 + len);
      if (len === 0 || !/^[0-9a-fA-F]+$/.test(hex) || hex.length !== len) throw new UnsupportedYaml(no, `escape \\${e}`);
      out += String.fromCodePoint(parseInt(hex, 16));
      i += len;
    }
    return out;
  }
  if (s === '{}') return {};
  if (s === '[]') return [];
  if (/^([[{|>&*!%@`]|[-?:]( |$))/.test(s)) throw new UnsupportedYaml(no, `scalar starting with ${s[0]}`);
  if (/^(null|Null|NULL|~)?$/.test(s)) return null;
  if (/^(true|True|TRUE)$/.test(s)) return true;
  if (/^(false|False|FALSE)$/.test(s)) return false;
  if (/^[-+]?[0-9]+$/.test(s)) return Number(s);
  if (/^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/.test(s)) return Number(s);
  if (/^(0o|0x|[-+]?\.(inf|Inf|INF)$|\.(nan|NaN|NAN)$)/.test(s)) throw new UnsupportedYaml(no, 'octal, hex or special float');
  if (s.includes(': ') || s.endsWith(':')) throw new UnsupportedYaml(no, 'mapping inside a scalar');
  return s;
}

/** `key: rest` (key plain or quoted) or null when the text is not a mapping entry. */
function splitEntry(text: string, no: number): { key: string; rest: string } | null {
  let end: number;
  if (text.startsWith('"') || text.startsWith("'")) {
    const close = text.indexOf(text[0] as string, 1);
    if (close < 0 || text[close + 1] !== ':') return null;
    end = close + 1;
  } else {
    const m = /:( |$)/.exec(text);
    if (m === null) return null;
    end = m.index;
  }
  const keyText = text.slice(0, end);
  if (keyText.startsWith('? ') || keyText === '?') throw new UnsupportedYaml(no, 'complex key');
  const key = parseScalar(keyText, no);
  return { key: key === null ? '' : String(key), rest: stripComment(text.slice(end + 1).trim()) };
}

/** Parses block YAML in the supported subset; throws UnsupportedYaml for anything else. */
export function parseBlockYaml(src: string): unknown {
  const lines = splitLines(src);
  let pos = 0;

  const node = (indent: number): unknown => {
    const l = lines[pos];
    if (l === undefined || l.indent < indent) return null;
    return l.text === '-' || l.text.startsWith('- ') ? seq(l.indent) : map(l.indent);
  };

  /** The value after `key:` or `-` with nothing on its line: a nested block, or null. */
  const nested = (parentIndent: number, seqAtSameIndent: boolean): unknown => {
    const next = lines[pos];
    if (next === undefined) return null;
    if (next.indent > parentIndent) return node(next.indent);
    if (seqAtSameIndent && next.indent === parentIndent && (next.text === '-' || next.text.startsWith('- '))) return seq(parentIndent);
    return null;
  };

  const value = (rest: string, l: Line, seqAtSameIndent: boolean): unknown => {
    if (rest === '') return nested(l.indent, seqAtSameIndent);
    const v = parseScalar(rest, l.no);
    const next = lines[pos];
    if (next !== undefined && next.indent > l.indent) throw new UnsupportedYaml(next.no, 'multi-line scalar');
    return v;
  };

  const map = (indent: number): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (let l = lines[pos]; l !== undefined && l.indent === indent && !(l.text === '-' || l.text.startsWith('- ')); l = lines[pos]) {
      const e = splitEntry(l.text, l.no);
      if (e === null) throw new UnsupportedYaml(l.no, 'expected key: value');
      if (Object.hasOwn(out, e.key)) throw new UnsupportedYaml(l.no, `duplicate key ${JSON.stringify(e.key)}`);
      pos++;
      out[e.key] = value(e.rest, l, true);
    }
    const l = lines[pos];
    if (l !== undefined && l.indent > indent) throw new UnsupportedYaml(l.no, 'unexpected indentation');
    return out;
  };

  const seq = (indent: number): unknown[] => {
    const out: unknown[] = [];
    for (let l = lines[pos]; l !== undefined && l.indent === indent && (l.text === '-' || l.text.startsWith('- ')); l = lines[pos]) {
      const rest = l.text === '-' ? '' : l.text.slice(2).trimStart();
      const inner: Line = { no: l.no, indent: l.indent + (l.text.length - rest.length), text: rest };
      if (rest !== '' && !rest.startsWith('- ') && splitEntry(rest, l.no) !== null) {
        // `- key: value` opens a mapping whose keys line up with `key`.
        lines[pos] = inner;
        out.push(map(inner.indent));
      } else if (rest === '-' || rest.startsWith('- ')) {
        lines[pos] = inner;
        out.push(seq(inner.indent));
      } else {
        pos++;
        out.push(value(stripComment(rest), l, false));
      }
    }
    return out;
  };

  const doc = node(0);
  const left = lines[pos];
  if (left !== undefined) throw new UnsupportedYaml(left.no, 'unexpected indentation');
  return doc;
}
