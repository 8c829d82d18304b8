// agent/services/json-scan.ts: value ends, object members and array items as ranges, against
// JSON.parse of the same text (strings with escaped quotes and brackets, nesting, whitespace, empties).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eachItem, eachMember, endOfValue, skipSpace } from '../../../../agent/services/json-scan.ts';

const items = (t: string) => {
  const out: unknown[] = [];
  eachItem(t, skipSpace(t, 0), (s, e) => out.push(JSON.parse(t.slice(s, e))));
  return out;
};
const members = (t: string) => {
  const out: Array<[string, unknown]> = [];
  eachMember(t, skipSpace(t, 0), (k, s, e) => out.push([k, JSON.parse(t.slice(s, e))]));
  return out;
};

void describe('json-scan', () => {
  it('finds the end of every kind of value', () => {
    for (const v of ['"a\\"]}b"', '"\\\\"', '12.5e3', 'true', 'null', '{"a":[1,{"b":"}"}]}', '[[],{},"["]']) {
      assert.equal(endOfValue(`${v},x`, 0), v.length, v);
    }
  });

  it('gives the items of an array as JSON.parse sees them, with or without whitespace', () => {
    const text = '[ [{"concat": ["10.0.0.1", "tcp", 80]}, {"goto": {"target": "a\\"]b"}}] ,\n {"concat":["1.1.1.1","1.1.1.1"]}, "x", 3, [] ]';
    assert.deepEqual(items(text), JSON.parse(text));
    assert.deepEqual(items('[]'), []);
    assert.deepEqual(items(' [ ] '), []);
  });

  it('gives the members of an object in order', () => {
    const text = '{"name": "svc4", "el\\"em": [1, 2], "map": {"k": "}"}, "n": null}';
    assert.deepEqual(members(text), Object.entries(JSON.parse(text) as object));
    assert.deepEqual(members('{ }'), []);
  });

  it('names the offset of broken input', () => {
    assert.throws(() => items('[1 2]'), /',' or '\]' expected at offset 3/);
    assert.throws(() => members('{"a" 1}'), /':' expected at offset 5/);
    assert.throws(() => items('["abc'), /unterminated string at offset 1/);
    assert.throws(() => items('[{"a": [1, 2}'), /unterminated value at offset 1/);
  });
});
