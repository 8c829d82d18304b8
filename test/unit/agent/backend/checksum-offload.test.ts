// The TX checksum offload decision: net-conf mode first, then the kernel release (bug fixed in 5.7).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decideChecksumOffload, parseKernelRelease } from '../../../../agent/backend/checksum-offload.ts';

void describe('parseKernelRelease', () => {
  void it('reads major.minor from os.release() forms', () => {
    assert.deepEqual(parseKernelRelease('6.18.44-fc-v857'), { major: 6, minor: 18 });
    assert.deepEqual(parseKernelRelease('5.4.0-150-generic'), { major: 5, minor: 4 });
    assert.deepEqual(parseKernelRelease('3.10.0-1160.el7.x86_64'), { major: 3, minor: 10 });
    assert.equal(parseKernelRelease('linux'), null);
    assert.equal(parseKernelRelease(''), null);
  });
});

void describe('decideChecksumOffload', () => {
  void it('auto: off before 5.7, on from 5.7, off when the release cannot be read', () => {
    assert.equal(decideChecksumOffload('auto', '5.6.19').offload, false);
    assert.equal(decideChecksumOffload('auto', '4.19.0-26-amd64').offload, false);
    assert.equal(decideChecksumOffload('auto', '5.7.0').offload, true);
    assert.equal(decideChecksumOffload('auto', '5.10.0-30-amd64').offload, true);
    assert.equal(decideChecksumOffload('auto', '6.1.0').offload, true);
    assert.equal(decideChecksumOffload('auto', 'weird').offload, false);
    assert.match(decideChecksumOffload('auto', '5.4.0').reason, /kernel 5\.4 is older than 5\.7/);
    assert.match(decideChecksumOffload('auto', '6.18.44').reason, /kernel 6\.18 is 5\.7 or newer/);
  });

  void it('the net-conf wins over the kernel version either way', () => {
    assert.deepEqual(decideChecksumOffload('off', '6.18.0'), { offload: false, reason: 'Backend.ChecksumOffload is "off" in the net-conf' });
    assert.deepEqual(decideChecksumOffload('on', '4.19.0'), { offload: true, reason: 'Backend.ChecksumOffload is "on" in the net-conf' });
  });

});
