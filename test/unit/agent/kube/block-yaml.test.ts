// The block YAML reader for kubeconfigs: on what it accepts it must read exactly what the full YAML
// library (the `yaml` package, YAML 1.2 core schema) reads; everything else it must refuse with
// UnsupportedYaml, never misread.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { UnsupportedYaml, parseBlockYaml } from '../../../../agent/kube/block-yaml.ts';

const CA = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n').toString('base64');

/** As `kubectl config view --raw` and kubeadm write them (go-yaml: sequences not indented under their key). */
const KUBEADM = `apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: ${CA}
    server: https://192.0.2.10:6443
  name: kubernetes
contexts:
- context:
    cluster: kubernetes
    user: kubernetes-admin
  name: kubernetes-admin@kubernetes
current-context: kubernetes-admin@kubernetes
kind: Config
preferences: {}
users:
- name: kubernetes-admin
  user:
    client-certificate-data: ${CA}
    client-key-data: ${CA}
`;

/** Indented sequences, comments, quoting, a leading document marker, CRLF line ends and odd scalars. */
const VARIED = [
  '---',
  '# written by hand',
  'apiVersion: "v1"   # quoted',
  "kind: 'Config'",
  'clusters:',
  '  - name: "a b"',
  '    cluster:',
  '      server: https://[fd00::1]:6443 # IPv6',
  '      insecure-skip-tls-verify: true',
  '      proxy-url: http://proxy:3128/x#y',
  '  -   name: second',
  '      cluster: {}',
  'contexts: []',
  'users:',
  '- name: u',
  '  user:',
  '    token: "tab\\there \\"quoted\\" \\u00e9"',
  "    username: 'it''s'",
  '    exec:',
  '      args:',
  '      - --flag',
  '      - -',
  '      -',
  '      - 42',
  '      - -1.5e3',
  '      - ~',
  '      - null',
  '      - FALSE',
  '      env: []',
  "'quoted key': x",
  'empty:',
  'nested:',
  '- - a',
  '  - b',
  '- c',
].join('\r\n');

const REFUSED: Array<[string, string]> = [
  ['block scalar', 'a: |\n  text\n'],
  ['folded scalar', 'a: >\n  text\n'],
  ['anchor', 'a: &x 1\nb: *x\n'],
  ['tag', 'a: !!str 1\n'],
  ['flow mapping with content', 'a: {b: 1}\n'],
  ['flow sequence with content', 'a: [1, 2]\n'],
  ['multi-line plain scalar', 'a: one\n  two\n'],
  ['several documents', 'a: 1\n---\nb: 2\n'],
  ['hex', 'a: 0x1f\n'],
  ['tab indentation', 'a:\n\tb: 1\n'],
  ['duplicate key', 'a: 1\na: 2\n'],
  ['multi-line double-quoted', 'a: "one\n  two"\n'],
  ['complex key', '? a\n: b\n'],
];

void describe('block YAML reader', () => {
  for (const [name, text] of [['kubeadm admin.conf', KUBEADM], ['varied', VARIED]] as const) {
    void it(`reads ${name} as the full YAML library does`, () => {
      assert.deepEqual(parseBlockYaml(text), parse(text));
    });
  }
  for (const [name, text] of REFUSED) {
    void it(`refuses: ${name}`, () => {
      assert.throws(() => parseBlockYaml(text), UnsupportedYaml);
    });
  }
  void it('says where the unsupported YAML is', () => {
    assert.throws(() => parseBlockYaml('a: 1\nb: |\n  x\n'), /line 2: scalar starting with \|/);
  });
});
