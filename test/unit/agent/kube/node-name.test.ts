// The node name as flanneld finds it: NODE_NAME, else the pod's spec.nodeName.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolveNodeName } from '../../../../agent/kube/node-name.ts';

void describe('kube node name', () => {
  void it('takes NODE_NAME without asking the API', async () => {
    assert.equal(await resolveNodeName({ nodeName: 'n1', podName: 'p', podNamespace: 'ns' }, () => Promise.reject(new Error('no call expected'))), 'n1');
  });
  void it('else reads spec.nodeName of POD_NAMESPACE/POD_NAME', async () => {
    const paths: string[] = [];
    const name = await resolveNodeName({ podName: 'weft-x7', podNamespace: 'kube-flannel' }, (m, p) => { paths.push(`${m} ${p}`); return Promise.resolve({ spec: { nodeName: 'worker-3' } }); });
    assert.equal(name, 'worker-3');
    assert.deepEqual(paths, ['GET /api/v1/namespaces/kube-flannel/pods/weft-x7']);
  });
  void it('fails with flanneld\'s messages', async () => {
    await assert.rejects(resolveNodeName({ podName: 'p' }, () => Promise.resolve({})), /POD_NAME and POD_NAMESPACE must be set/);
    await assert.rejects(resolveNodeName({ podName: 'p', podNamespace: 'ns' }, () => Promise.resolve({ spec: {} })), /node name not present in pod spec 'ns\/p'/);
    await assert.rejects(resolveNodeName({ podName: 'p', podNamespace: 'ns' }, () => Promise.reject(new Error('403 forbidden'))), /error retrieving pod spec for 'ns\/p': 403 forbidden/);
  });
});
