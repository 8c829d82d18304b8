// A stand-in kube-apiserver for services-memory-weftd.ts (a child process, so its memory is not the
// measured one): N Services x 10-endpoint EndpointSlices shaped as kube-apiserver v1.34 returns them
// (uid, timestamps, managedFields of the writer), served in limit/continue list pages, and watches
// that stay open; a message {change: i} from the parent sends slice i's endpoints, slid by one, as a
// MODIFIED event on every open slice watch. Prints its port on stdout. Plain CommonJS: starts fast.
'use strict';
/* global process, require, URL */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a plain CommonJS helper run by node directly
const http = require('node:http');

const N = Number(process.argv[2] ?? 10000);
const ip = (i) => `10.${100 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
const cip = (s) => `10.97.${((s + 1) >> 8) & 255}.${(s + 1) & 255}`;
const uid = (s, k) => `${k}${String(s).padStart(7, '0')}-5a1b-4c1e-9d7a-0123456789ab`;
const ts = '2026-12-07T05:00:00Z';
const mf = (op, api, fields) => [{ manager: 'kube-writer', operation: op, apiVersion: api, time: ts, fieldsType: 'FieldsV1', fieldsV1: fields }];
let rv = 1000;
const svcRv = [];
const sliceRv = [];
const sliceIps = [];

function service(s) {
  return {
    metadata: { name: `s${s}`, namespace: 'default', uid: uid(s, 'a'), resourceVersion: String(svcRv[s]), creationTimestamp: ts,
      managedFields: mf('Update', 'v1', { 'f:spec': { 'f:clusterIP': {}, 'f:internalTrafficPolicy': {}, 'f:ports': { '.': {}, 'k:{"port":80,"protocol":"TCP"}': { '.': {}, 'f:name': {}, 'f:port': {}, 'f:protocol': {}, 'f:targetPort': {} } }, 'f:sessionAffinity': {}, 'f:type': {} } }) },
    spec: { ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8080 }], clusterIP: cip(s), clusterIPs: [cip(s)], type: 'ClusterIP', sessionAffinity: 'None', ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack', internalTrafficPolicy: 'Cluster' },
    status: { loadBalancer: {} },
  };
}

function slice(s) {
  return {
    metadata: { name: `s${s}-1`, namespace: 'default', uid: uid(s, 'b'), resourceVersion: String(sliceRv[s]), generation: 1, creationTimestamp: ts,
      labels: { 'endpointslice.kubernetes.io/managed-by': 'weft-bench', 'kubernetes.io/service-name': `s${s}` },
      managedFields: mf('Update', 'discovery.k8s.io/v1', { 'f:addressType': {}, 'f:endpoints': {}, 'f:metadata': { 'f:labels': { '.': {}, 'f:endpointslice.kubernetes.io/managed-by': {}, 'f:kubernetes.io/service-name': {} } }, 'f:ports': {} }) },
    addressType: 'IPv4',
    endpoints: sliceIps[s].map((a) => ({ addresses: [a], conditions: { ready: true, serving: true, terminating: false }, nodeName: 'elsewhere' })),
    ports: [{ name: 'http', protocol: 'TCP', port: 8080 }],
  };
}

for (let s = 0; s < N; s++) {
  svcRv.push(++rv);
  sliceRv.push(++rv);
  sliceIps.push(Array.from({ length: 10 }, (_, e) => ip(s * 10 + e)));
}
const watchers = { services: new Set(), endpointslices: new Set() };

const server = http.createServer((req, res) => {
  const u = new URL(req.url ?? '/', 'http://x');
  const kind = u.pathname.endsWith('/endpointslices') ? 'endpointslices' : u.pathname.endsWith('/services') ? 'services' : '';
  if (kind === '') {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ kind: 'List', metadata: { resourceVersion: String(rv) }, items: [] }));
    return;
  }
  if (u.searchParams.get('watch') === 'true') {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write('');
    watchers[kind].add(res);
    req.on('close', () => watchers[kind].delete(res));
    return;
  }
  const limit = Number(u.searchParams.get('limit') ?? N);
  const from = Number(u.searchParams.get('continue') || 0);
  const to = Math.min(N, from + limit);
  const items = [];
  for (let s = from; s < to; s++) items.push(kind === 'services' ? service(s) : slice(s));
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify({ kind: kind === 'services' ? 'ServiceList' : 'EndpointSliceList', apiVersion: 'v1', metadata: { resourceVersion: String(rv), ...(to < N ? { continue: String(to) } : {}) }, items }));
});

// kube-apiserver keeps idle connections open (a client may sit in a long synchronous sync between requests).
server.keepAliveTimeout = 0;

let next = 0;
process.on('message', (m) => {
  if (typeof m?.change !== 'number') return;
  const s = m.change;
  sliceIps[s] = [...sliceIps[s].slice(1), `10.150.${(next >> 8) & 255}.${next++ & 255}`];
  sliceRv[s] = ++rv;
  const line = `${JSON.stringify({ type: 'MODIFIED', object: slice(s) })}\n`;
  for (const w of watchers.endpointslices) w.write(line);
});
process.on('disconnect', () => process.exit(0));
server.listen(0, '127.0.0.1', () => { process.stdout.write(`${server.address().port}\n`); });
