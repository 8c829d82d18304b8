import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { matchesSelector, selectorKey } from '../../../../agent/policy/selector.ts';

void describe('matchesSelector', () => {
  const labels = { app: 'web', tier: 'front' };
  it('an empty selector matches everything, matchLabels needs every pair', () => {
    assert.equal(matchesSelector({}, {}), true);
    assert.equal(matchesSelector({ matchLabels: { app: 'web' } }, labels), true);
    assert.equal(matchesSelector({ matchLabels: { app: 'web', tier: 'back' } }, labels), false);
    assert.equal(matchesSelector({ matchLabels: { other: 'x' } }, labels), false);
  });
  it('In, NotIn, Exists, DoesNotExist as labels.Selector reads them', () => {
    const m = (operator: string, values?: string[], key = 'app') => matchesSelector({ matchExpressions: [{ key, operator, ...(values ? { values } : {}) }] }, labels);
    assert.equal(m('In', ['web', 'db']), true);
    assert.equal(m('In', ['db']), false);
    assert.equal(m('In', ['web'], 'missing'), false);
    assert.equal(m('NotIn', ['db']), true);
    assert.equal(m('NotIn', ['web']), false);
    assert.equal(m('NotIn', ['web'], 'missing'), true, 'a missing key satisfies NotIn');
    assert.equal(m('Exists'), true);
    assert.equal(m('Exists', undefined, 'missing'), false);
    assert.equal(m('DoesNotExist'), false);
    assert.equal(m('DoesNotExist', undefined, 'missing'), true);
    assert.equal(m('Gt', ['1']), false, 'an unknown operator matches nothing');
  });
  it('matchLabels and matchExpressions are ANDed', () => {
    assert.equal(matchesSelector({ matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['back'] }] }, labels), false);
  });
  it('selectorKey ignores key and value order', () => {
    const a = selectorKey({ matchLabels: { b: '2', a: '1' }, matchExpressions: [{ key: 'k', operator: 'In', values: ['y', 'x'] }] });
    const b = selectorKey({ matchLabels: { a: '1', b: '2' }, matchExpressions: [{ key: 'k', operator: 'In', values: ['x', 'y'] }] });
    assert.equal(a, b);
    assert.notEqual(selectorKey({}), selectorKey({ matchLabels: { a: '1' } }));
  });
});
