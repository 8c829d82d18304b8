// Kubernetes API connection: kubeconfig (YAML, JSON, relative files), --kube-api-url, in-cluster.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseBlockYaml } from '../../../../agent/kube/block-yaml.ts';
import { parseKubeconfig, resolveKubeConn } from '../../../../agent/kube/config.ts';

const YAML = `apiVersion: v1
kind: Config
current-context: b
clusters:
- name: one
  cluster:
    server: https://192.0.2.1:6443
    certificate-authority: ca.crt
- name: two
  cluster:
    server: https://192.0.2.2:6443
    certificate-authority-data: ${Buffer.from('CA2').toString('base64')}
contexts:
- name: a
  context: {cluster: one, user: u}
- name: b
  context:
    cluster: two
    user: u
users:
- name: u
  user:
    token: "secret"
`;

void describe('kube config', () => {
  void it('follows current-context through clusters and users (a flow mapping inside: the full YAML library reads it)', async () => {
    const c = await parseKubeconfig(YAML, '/nonexistent');
    assert.equal(c.server, 'https://192.0.2.2:6443');
    assert.equal(c.ca?.toString(), 'CA2');
    assert.equal(c.token, 'secret');
  });
  void it('reads files relative to the kubeconfig and accepts JSON', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'weft-kubeconfig-'));
    try {
      writeFileSync(join(dir, 'ca.crt'), 'CA1');
      const json = JSON.stringify({ 'current-context': 'a', clusters: [{ name: 'one', cluster: { server: 'https://192.0.2.1:6443', 'certificate-authority': 'ca.crt' } }], contexts: [{ name: 'a', context: { cluster: 'one' } }] });
      writeFileSync(join(dir, 'kc'), json);
      const c = await resolveKubeConn({ kubeconfigFile: join(dir, 'kc'), kubeApiUrl: 'https://198.51.100.1:6443' });
      assert.equal(c.server, 'https://198.51.100.1:6443');
      assert.equal(c.ca?.toString(), 'CA1');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  void it('reads the block style kubeconfig writers produce without the full library, to the same result', async () => {
    const block = YAML.replace('  context: {cluster: one, user: u}', '  context:\n    cluster: one\n    user: u');
    assert.equal(parseBlockYaml(block) !== null, true, 'the block reader takes it');
    assert.deepEqual(await parseKubeconfig(block, '/nonexistent'), await parseKubeconfig(YAML, '/nonexistent'));
  });
  void it('refuses a context that does not exist', async () => {
    await assert.rejects(() => parseKubeconfig(YAML.replace('current-context: b', 'current-context: zz'), '/'), /context "zz" not found/);
  });
  void it('uses the service account in a cluster, and says what is missing outside one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'weft-sa-'));
    try {
      writeFileSync(join(dir, 'ca.crt'), 'SACA');
      const c = await resolveKubeConn({}, { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' }, dir);
      assert.equal(c.server, 'https://[fd00::1]:443');
      assert.equal(c.tokenFile, join(dir, 'token'));
      assert.equal(c.ca?.toString(), 'SACA');
      await assert.rejects(() => resolveKubeConn({}, {}, dir), /not in a cluster/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
