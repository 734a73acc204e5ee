// bench/differential/faults.js — the faults a request of the differential
// tester carries, read from the request itself: the generator's mutation
// and the faults random values fall into (a set with a duplicate, BETWEEN
// bounds the wrong way round, a reserved word, two writes of one key ...).
// Each fault has an id and a pattern of the messages that report it.  When a
// request carries two faults, AWS does not say which one DynamoDB reports;
// compare.js accepts two answers that report two different faults of it.
'use strict';

const fs = require('fs');
const path = require('path');

// DynamoDB's reserved words, as the extension lists them (src/expr/reserved_words.c).
const RESERVED = new Set(fs.readFileSync(path.join(__dirname, '../../src/expr/reserved_words.c'), 'utf8')
  .match(/"[A-Z_]+"/g).map((w) => w.slice(1, -1)));
// Words of the expression grammar itself (reserved too, but not attribute names there).
const GRAMMAR = new Set(['AND', 'OR', 'NOT', 'BETWEEN', 'IN', 'SET', 'REMOVE', 'ADD', 'DELETE']);
const FUNCTIONS = new Set(['attribute_exists', 'attribute_not_exists', 'attribute_type', 'begins_with', 'contains',
  'size', 'if_not_exists', 'list_append']);

// A transaction cancelled with a ValidationError reason reports an item's fault too.
const CANCELLED = 'Transaction cancelled.*ValidationError';
const FAULTS = {
  'set-duplicates': /Input collection.*contains duplicates/,
  'between-bounds': /BETWEEN operator requires upper bound/,
  'operand-type': /Incorrect operand type|incorrect data type|requires same data type/,
  'reserved-word': /reserved keyword/,
  'index-key-type': new RegExp(`Type mismatch|Invalid attribute value type|${CANCELLED}`),
  'key-condition-type': /KeyConditionExpression|Type mismatch|Invalid attribute value type|Condition parameter type does not match schema type/,
  'filter-on-key': /can only contain non-primary key attributes/,
  'select-rule': /ALL_PROJECTED_ATTRIBUTES|ALL_ATTRIBUTES|Select/,
  'batch-duplicate-keys': /Provided list of item keys contains duplicates/,
  'same-item-twice': /multiple operations on one item/,
  'update-overlap': /overlap/,
  'unused-placeholders': /unused in expressions|can only be specified when using expressions/,
  'update-runtime': new RegExp(`document path provided in the update expression is invalid|incorrect data type|refers to an attribute that does not exist|${CANCELLED}`),
  mutation: /./,
};

const isSet = (v) => v && typeof v === 'object' && (v.SS || v.NS || v.BS);
const canonicalN = (n) => String(Number(n));
// True when some set in a value (nested in maps and lists) repeats a member.
function hasDuplicateSet(v) {
  if (!v || typeof v !== 'object') return false;
  for (const [k, x] of Object.entries(v)) {
    if ((k === 'SS' || k === 'BS') && Array.isArray(x) && new Set(x).size !== x.length) return true;
    if (k === 'NS' && Array.isArray(x) && new Set(x.map(canonicalN)).size !== x.length) return true;
    if (k === 'L' && Array.isArray(x) && x.some(hasDuplicateSet)) return true;
    if (k === 'M' && x && Object.values(x).some(hasDuplicateSet)) return true;
  }
  return false;
}
const typeOf = (v) => (v && typeof v === 'object' ? Object.keys(v)[0] : undefined);
const scalarType = (v) => ['S', 'N', 'B'].includes(typeOf(v));
// A key as text, its numbers canonical ("10" and "1E1" are one key).
const keyText = (key) => JSON.stringify(Object.keys(key || {}).sort()
  .map((k) => [k, key[k] && key[k].N !== undefined ? { N: canonicalN(key[k].N) } : key[k]]));

// A table of the sequence: attribute types, key attributes, indexes.
function tableInfo(def) {
  const types = Object.fromEntries((def.AttributeDefinitions || []).map((a) => [a.AttributeName, a.AttributeType]));
  const indexes = [...(def.LocalSecondaryIndexes || []), ...(def.GlobalSecondaryIndexes || [])];
  return { def, types, keys: def.KeySchema.map((k) => k.AttributeName), indexes,
    indexKeys: new Set(indexes.flatMap((ix) => ix.KeySchema.map((k) => k.AttributeName))) };
}

// The faults of one expression text with its placeholders.
function expressionFaults(text, values, add) {
  if (typeof text !== 'string') return;
  const value = (ph) => values && values[ph];
  for (const m of text.matchAll(/BETWEEN\s+(:\w+)\s+AND\s+(:\w+)/g)) {
    const [lo, hi] = [value(m[1]), value(m[2])];
    if (!lo || !hi) continue;
    const bytes = (b) => Buffer.from(b, 'base64');
    if (!scalarType(lo) || !scalarType(hi)) add('operand-type');
    else if (typeOf(lo) !== typeOf(hi)) add('operand-type');
    else if ((typeOf(lo) === 'N' && Number(lo.N) > Number(hi.N)) || (typeOf(lo) === 'S' && lo.S > hi.S)
      || (typeOf(lo) === 'B' && Buffer.compare(bytes(lo.B), bytes(hi.B)) > 0)) add('between-bounds');
  }
  for (const m of text.matchAll(/(?:<=|>=|<(?!>)|(?<!<)>)\s*(:\w+)|(:\w+)\s*(?:<=|>=|<(?!>)|(?<![<-])>)/g)) {
    const v = value(m[1] || m[2]);
    if (v && !scalarType(v)) add('operand-type');
  }
  for (const m of text.matchAll(/(?<![#:\w])([A-Za-z_][A-Za-z0-9_]*)(\s*\()?/g)) {
    const word = m[1];
    if (m[2] && FUNCTIONS.has(word)) continue;
    if (GRAMMAR.has(word.toUpperCase())) continue;
    if (RESERVED.has(word.toUpperCase())) add('reserved-word');
  }
}

// The update paths of an UpdateExpression as step lists, and its ADD/DELETE operands.
function updateActions(text, names) {
  const actions = [];
  const parts = text.split(/\b(SET|REMOVE|ADD|DELETE)\b/i).slice(1);
  for (let i = 0; i < parts.length; i += 2) {
    const kind = parts[i].toUpperCase();
    let depth = 0;
    let start = 0;
    const body = parts[i + 1] || '';
    const items = [];
    for (let j = 0; j <= body.length; j++) {
      const c = body[j];
      if (c === '(') depth++;
      else if (c === ')') depth--;
      else if ((c === ',' && depth === 0) || j === body.length) { items.push(body.slice(start, j).trim()); start = j + 1; }
    }
    for (const item of items.filter(Boolean)) {
      const target = kind === 'SET' ? item.split('=')[0].trim() : item.split(/\s+/)[0];
      const steps = target.split(/\.|(?=\[)/).map((s) => (s.startsWith('#') && names && names[s] ? names[s] : s));
      actions.push({ kind, steps, operand: kind === 'ADD' || kind === 'DELETE' ? item.split(/\s+/)[1] : null, item });
    }
  }
  return actions;
}

// The faults of an UpdateExpression beyond those of any expression.
function updateFaults(text, values, names, add) {
  if (typeof text !== 'string') return;
  const actions = updateActions(text, names);
  for (let i = 0; i < actions.length; i++) {
    for (let j = i + 1; j < actions.length; j++) {
      const [a, b] = [actions[i].steps, actions[j].steps];
      const n = Math.min(a.length, b.length);
      if (a.slice(0, n).join('\u0000') === b.slice(0, n).join('\u0000')) add('update-overlap');
    }
    const { kind, operand, item } = actions[i];
    const v = operand && values && values[operand];
    if (kind === 'ADD' && v && !isSet(v) && typeOf(v) !== 'N') add('operand-type');
    if (kind === 'DELETE' && v && !isSet(v)) add('operand-type');
    // faults only the item can show (one per action that may meet one): a path under a missing attribute,
    // a value read from a path that may be missing, arithmetic, list_append, ADD or DELETE on what is there
    const source = kind === 'SET' ? item.split('=').slice(1).join('=').replace(/if_not_exists\([^,]*,/g, '(') : '';
    if ((kind === 'SET' && (/[+-]|list_append/.test(source) || /(^|[\s(,])#?[A-Za-z_]/.test(source)))
      || ((kind === 'SET' || kind === 'REMOVE') && actions[i].steps.length > 1)
      || kind === 'ADD' || kind === 'DELETE') add('update-runtime');
  }
}

// The faults of one item-level request (PutItem, a transaction's Put ...) against its table.
function actionFaults(kind, req, table, add) {
  const values = req.ExpressionAttributeValues;
  const names = req.ExpressionAttributeNames;
  if (values && Object.values(values).some(hasDuplicateSet)) add('set-duplicates');
  if (req.Item && hasDuplicateSet({ M: req.Item })) add('set-duplicates');
  const texts = ['ConditionExpression', 'FilterExpression', 'KeyConditionExpression', 'ProjectionExpression', 'UpdateExpression']
    .map((f) => req[f]).filter((t) => typeof t === 'string');
  for (const text of texts) expressionFaults(text, values, add);
  const used = new Set(texts.flatMap((t) => t.match(/[#:][A-Za-z0-9_]+/g) || []));
  if (Object.keys({ ...names, ...values }).some((k) => !used.has(k))) add('unused-placeholders');
  updateFaults(req.UpdateExpression, values, names, add);
  if (!table) return;
  if (req.Item) {
    for (const attr of table.indexKeys) {
      if (req.Item[attr] && typeOf(req.Item[attr]) !== table.types[attr]) add('index-key-type');
    }
  }
  if (kind === 'Query' || kind === 'Scan') queryFaults(req, table, add);
}

// Query and Scan: key condition types, filters on key attributes, Select.
function queryFaults(req, table, add) {
  const values = req.ExpressionAttributeValues || {};
  const names = req.ExpressionAttributeNames || {};
  const ix = req.IndexName && table.indexes.find((i) => i.IndexName === req.IndexName);
  if (req.KeyConditionExpression) {
    for (const m of req.KeyConditionExpression.matchAll(/(#?\w+)\s*(?:=|<=|>=|<|>|BETWEEN)\s*(:\w+)|begins_with\((#?\w+),\s*(:\w+)\)/g)) {
      const attr = names[m[1] || m[3]] || m[1] || m[3];
      const v = values[m[2] || m[4]];
      if (v && table.types[attr] && typeOf(v) !== table.types[attr]) add('key-condition-type');
      if (m[3] && table.types[attr] === 'N') add('key-condition-type');
    }
  }
  if (req.KeyConditionExpression && req.FilterExpression) {
    const keys = ix ? ix.KeySchema.map((k) => k.AttributeName) : table.keys;
    const used = [...req.FilterExpression.matchAll(/#?\w+/g)].map((m) => names[m[0]] || m[0]);
    if (used.some((a) => keys.includes(a) || table.keys.includes(a))) add('filter-on-key');
  }
  if (req.Select === 'ALL_PROJECTED_ATTRIBUTES' && !req.IndexName) add('select-rule');
  if (req.Select === 'ALL_ATTRIBUTES' && ix && ix.Projection && ix.Projection.ProjectionType !== 'ALL') add('select-rule');
}

// The faults of a step: [{ id, pattern }], each fault once.
function faultsOf(step, tables) {
  const byName = Object.fromEntries((tables || []).map((t) => [t.TableName, tableInfo(t)]));
  // one entry per occurrence: two occurrences of one kind are two faults (which one is reported is a matter of order)
  const found = [];
  const add = (id) => { found.push(id); };
  const req = step.req || {};
  if (step.invalid) add('mutation');
  if (step.op === 'TransactWriteItems' || step.op === 'TransactGetItems') {
    const seen = new Set();
    for (const entry of req.TransactItems || []) {
      const [kind, action] = Object.entries(entry)[0] || [];
      if (!action) continue;
      actionFaults(kind, action, byName[action.TableName], add);
      const key = action.Key || (action.Item && byName[action.TableName]
        && Object.fromEntries(byName[action.TableName].keys.map((k) => [k, action.Item[k]])));
      const id = `${action.TableName} ${keyText(key)}`;
      if (seen.has(id)) add('same-item-twice');
      seen.add(id);
    }
  } else if (step.op === 'BatchWriteItem' || step.op === 'BatchGetItem') {
    for (const [name, list] of Object.entries(req.RequestItems || {})) {
      const table = byName[name];
      const seen = new Set();
      const keys = Array.isArray(list)
        ? list.map((w) => (w.PutRequest ? (actionFaults('Put', w.PutRequest, table, add),
          table && Object.fromEntries(table.keys.map((k) => [k, w.PutRequest.Item && w.PutRequest.Item[k]])))
          : w.DeleteRequest && w.DeleteRequest.Key))
        : ((actionFaults('Get', list, table, add), list.Keys || []));
      for (const key of keys) {
        const id = keyText(key);
        if (seen.has(id)) add('batch-duplicate-keys');
        seen.add(id);
      }
    }
  } else {
    actionFaults(step.op, req, byName[req.TableName], add);
  }
  return found.map((id) => ({ id, pattern: FAULTS[id] }));
}

module.exports = { faultsOf };
