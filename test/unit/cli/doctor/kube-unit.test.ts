// doctor on Kubernetes nodes, the pure parts: a weft install --kube-subnet-mgr unit's flags and
// NODE_NAME as doctor's defaults, the options' defaults and refusals, and fixes in a DaemonSet's words.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DoctorOptionError, normalizeDoctorOptions } from '../../../../cli/doctor/options.ts';
import { daemonSetFix, WEFTD_FIXES } from '../../../../cli/doctor/problem.ts';
import { parseUnitFlags } from '../../../../cli/doctor/unit.ts';
import { defaultKubeconfig, KUBELET_KUBECONFIG } from '../../../../cli/doctor/kube.ts';
import { renderWeftdUnit } from '../../../../cli/install/render.ts';

describe('doctor --kube-subnet-mgr options', () => {
  test("the installed unit's kube source and NODE_NAME are doctor's", () => {
    const unit = renderWeftdUnit({ agentDir: '/usr/local/bin', weftConfDir: '/etc/weft', leaseSource: { kind: 'kube', nodeName: 'worker-1', kubeconfigFile: '/etc/weft/kubeconfig' } });
    const f = parseUnitFlags(unit, new Map());
    assert.equal(f.kubeSubnetMgr, 'true');
    assert.equal(f.kubeconfigFile, '/etc/weft/kubeconfig');
    assert.equal(f.nodeName, 'worker-1');
    const o = normalizeDoctorOptions(f, true, {});
    assert.deepEqual(o.kube, { kubeconfigFile: '/etc/weft/kubeconfig', nodeName: 'worker-1', annotationPrefix: 'flannel.alpha.coreos.com', configMap: 'kube-weft/weft-cfg' });
    assert.equal(o.daemonSet, false, 'a unit: systemd words');
  });

  test('no unit: a DaemonSet node; NODE_NAME names the Node; kube flags without --kube-subnet-mgr are refused', () => {
    const o = normalizeDoctorOptions({ kubeSubnetMgr: true, kubeApiUrl: 'https://10.0.0.1:6443' }, false, { NODE_NAME: 'n7' });
    assert.equal(o.daemonSet, true);
    assert.equal(o.kube?.nodeName, 'n7');
    assert.throws(() => normalizeDoctorOptions({ kubeconfigFile: '/k' }, false, {}), (e: unknown) => e instanceof DoctorOptionError && /--kubeconfig-file need --kube-subnet-mgr/.test(e.message));
    assert.throws(() => normalizeDoctorOptions({ kubeSubnetMgr: true, store: 'file:/x' }, false, {}), /choose one lease source/);
    assert.throws(() => normalizeDoctorOptions({ kubeSubnetMgr: true, kubeConfigmap: 'weft-cfg' }, false, {}), /namespace\/name/);
  });

  test("in a pod with no unit and no other source: the Nodes' leases, in-cluster, as the DaemonSet's weftd", () => {
    const o = normalizeDoctorOptions({}, false, { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443', NODE_NAME: 'w2' });
    assert.deepEqual(o.kube, { nodeName: 'w2', annotationPrefix: 'flannel.alpha.coreos.com', configMap: 'kube-weft/weft-cfg' });
    assert.equal(o.daemonSet, true);
    assert.equal(normalizeDoctorOptions({ store: 'file:/var/lib/weft/leases' }, false, { KUBERNETES_SERVICE_HOST: '10.96.0.1' }).kube, undefined);
  });

  test('the kubeconfig by default: KUBECONFIG, else the kubelet\'s on a host, none in a pod', () => {
    assert.equal(defaultKubeconfig({ KUBECONFIG: '/a:/b' }, () => true), '/a');
    assert.equal(defaultKubeconfig({}, (p) => p === KUBELET_KUBECONFIG), KUBELET_KUBECONFIG);
    assert.equal(defaultKubeconfig({ KUBERNETES_SERVICE_HOST: '10.96.0.1' }, () => true), undefined);
    assert.equal(defaultKubeconfig({}, () => false), undefined);
  });
});

describe('fixes on a DaemonSet node', () => {
  test('no systemctl or journalctl is left, and each becomes the kubectl that does the same', () => {
    for (const fix of [WEFTD_FIXES, 'systemctl restart weftd (it re-acquires the lease and rewrites subnet.env); see journalctl -u weftd',
      'start weftd (systemctl enable --now weftd); it writes /run/flannel/subnet.env once it holds a lease', 'systemctl status weftd; journalctl -u weftd -n 50',
      "pass --iface as weftd has it (systemctl cat weftd)"]) {
      const out = daemonSetFix(fix, 'worker-1');
      assert.doesNotMatch(out, /systemctl|journalctl/, out);
      assert.match(out, /kubectl -n kube-weft/, out);
    }
    assert.match(daemonSetFix('journalctl -u weftd -n 50', 'w'), /kubectl -n kube-weft logs -c weftd .* --tail 50$/);
    assert.match(daemonSetFix('systemctl restart weftd', 'w'), /^kubectl -n kube-weft delete pod -l app=weft --field-selector spec\.nodeName=w/);
  });
});
