// bench/differential/gen.js — the seeded generator of the differential
// tester (bench/differential.sh): random request SEQUENCES, each a JSON
// object { seed, tables: [CreateTable request], steps: [{ op, req, page?,
// segments? }] } in which "$T0", "$T1" stand for the sequence's tables and
// "$TX" for a table that does not exist (run.js substitutes fresh names).
// The same seed gives the same sequence; nothing here depends on a response.
'use strict';

// mulberry32: a small seeded PRNG.
function prng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n) => Math.floor(next() * n);
  const pick = (list) => list[int(list.length)];
  const chance = (p) => next() < p;
  // k distinct members of a list, in the list's order
  const some = (list, k) => {
    const idx = list.map((_, i) => i).sort(() => next() - 0.5).slice(0, k).sort((x, y) => x - y);
    return idx.map((i) => list[i]);
  };
  return { next, int, pick, chance, some };
}

// The seed of sequence i of a run seeded with s (each sequence is reproducible alone).
function sequenceSeed(runSeed, i) {
  let h = (runSeed ^ 0x9E3779B9) >>> 0;
  h = Math.imul(h ^ (i + 1), 0x85EBCA6B) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xC2B2AE35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

// Small pools, so that keys collide and conditions both pass and fail.
const POOL = {
  S: ['a', 'b', 'ab', 'abc', 'b1', 'x'],
  N: ['1', '2', '10', '-3', '2.5', '1.50', '0', '1E1'],
  B: ['AQ==', 'AQI=', 'Ag==', '/w=='],
};
const KEY_TYPES = ['S', 'N', 'B'];
// Non-key attributes an item may have ('status' and 'name' are reserved words).
const PLAIN_ATTRS = ['a', 'b', 'n', 's', 'status', 'm', 'l', 'ss', 'ns', 'bs', 'flag'];
const RESERVED = new Set(['status', 'name', 'size', 'count', 'data', 'key', 'value']);

function generator(seed) {
  const r = prng(seed);
  const { int, pick, chance, some } = r;

  const scalar = (type) => ({ [type]: pick(POOL[type]) });
  const setOf = (type) => {
    const canon = { N: ['1', '2', '10', '-3', '2.5', '0'], S: POOL.S, B: POOL.B }[type];
    const vals = some(canon, 1 + int(3));
    if (chance(0.03)) vals.push(vals[0]); // a duplicate: refused
    return { [`${type}S`]: vals };
  };
  // Any AttributeValue, nested up to depth 2.
  function anyValue(depth = 0) {
    const roll = int(depth < 2 ? 10 : 7);
    switch (roll) {
      case 0: case 1: return scalar('S');
      case 2: case 3: return scalar('N');
      case 4: return scalar('B');
      case 5: return chance(0.5) ? { BOOL: chance(0.5) } : { NULL: true };
      case 6: return setOf(pick(KEY_TYPES));
      case 7: case 8: return { L: Array.from({ length: int(4) }, () => anyValue(depth + 1)) };
      default: return mapValue(depth + 1);
    }
  }
  function mapValue(depth = 1) {
    const m = {};
    if (chance(0.7)) m.x = chance(0.8) ? scalar('N') : anyValue(depth + 1);
    if (chance(0.6)) m.y = scalar('S');
    if (chance(0.5)) m.z = { M: chance(0.8) ? { q: scalar('N') } : {} };
    if (chance(0.5)) m.lst = { L: Array.from({ length: int(4) }, () => scalar(pick(['N', 'S']))) };
    return { M: m };
  }
  // A value for a non-key attribute, mostly of its usual type.
  function attrValue(attr) {
    if (chance(0.1)) return anyValue();
    switch (attr) {
      case 'n': return scalar('N');
      case 's': case 'status': return scalar('S');
      case 'm': return mapValue();
      case 'l': return { L: Array.from({ length: int(5) }, () => (chance(0.7) ? scalar(pick(['N', 'S'])) : mapValue(2))) };
      case 'ss': return setOf('S');
      case 'ns': return setOf('N');
      case 'bs': return setOf('B');
      case 'flag': return { BOOL: chance(0.5) };
      default: return anyValue();
    }
  }

  // ------------------------------------------------------------ tables --
  function tableDef() {
    const types = {};
    const hashType = pick(KEY_TYPES);
    types.pk = hashType;
    const def = { KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }] };
    const range = chance(0.65);
    if (range) {
      types.sk = pick(KEY_TYPES);
      def.KeySchema.push({ AttributeName: 'sk', KeyType: 'RANGE' });
    }
    const projection = () => {
      const t = pick(['ALL', 'KEYS_ONLY', 'INCLUDE']);
      return t === 'INCLUDE' ? { ProjectionType: t, NonKeyAttributes: some(['a', 'n', 'm', 'ss', 'status'], 1 + int(2)) }
        : { ProjectionType: t };
    };
    if (range && chance(0.4)) {
      def.LocalSecondaryIndexes = [];
      const n = 1 + int(2);
      for (let i = 1; i <= n; i++) {
        const attr = `ls${i}`;
        types[attr] = pick(KEY_TYPES);
        def.LocalSecondaryIndexes.push({ IndexName: `lsi${i}`, KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: attr, KeyType: 'RANGE' }], Projection: projection() });
      }
    }
    if (chance(0.6)) {
      def.GlobalSecondaryIndexes = [];
      const n = 1 + int(2);
      for (let i = 1; i <= n; i++) {
        // the GSI's hash key: an attribute of its own, or the table's sort key
        const h = range && chance(0.2) ? 'sk' : `g${i}h`;
        if (!types[h]) types[h] = pick(KEY_TYPES);
        const ks = [{ AttributeName: h, KeyType: 'HASH' }];
        if (chance(0.6)) {
          const s = chance(0.25) ? 'pk' : `g${i}r`;
          if (!types[s]) types[s] = pick(KEY_TYPES);
          ks.push({ AttributeName: s, KeyType: 'RANGE' });
        }
        def.GlobalSecondaryIndexes.push({ IndexName: `gsi${i}`, KeySchema: ks, Projection: projection() });
      }
    }
    def.AttributeDefinitions = Object.entries(types).map(([AttributeName, AttributeType]) => ({ AttributeName, AttributeType }));
    if (chance(0.8)) def.BillingMode = 'PAY_PER_REQUEST';
    else {
      def.BillingMode = 'PROVISIONED';
      def.ProvisionedThroughput = { ReadCapacityUnits: 5, WriteCapacityUnits: 5 };
      for (const g of def.GlobalSecondaryIndexes || []) g.ProvisionedThroughput = { ReadCapacityUnits: 1 + int(5), WriteCapacityUnits: 1 + int(5) };
    }
    return def;
  }

  // ---------------------------------------------------------- sequence --
  const tables = [tableDef()];
  if (chance(0.3)) tables.push(tableDef());
  const info = tables.map((def) => {
    const types = Object.fromEntries(def.AttributeDefinitions.map((a) => [a.AttributeName, a.AttributeType]));
    const hash = def.KeySchema[0].AttributeName;
    const range = def.KeySchema[1] ? def.KeySchema[1].AttributeName : null;
    const indexes = [...(def.LocalSecondaryIndexes || []), ...(def.GlobalSecondaryIndexes || [])].map((ix) => ({
      name: ix.IndexName, hash: ix.KeySchema[0].AttributeName, range: ix.KeySchema[1] ? ix.KeySchema[1].AttributeName : null }));
    return { types, hash, range, indexes };
  });

  // An expression's placeholders, gathered while it is written.
  function context() {
    const names = {};
    const values = {};
    let nv = 0;
    return {
      names, values,
      // an attribute name as written in an expression: bare, or a #placeholder (always for reserved words)
      name(attr) {
        if (RESERVED.has(attr) || chance(0.3)) {
          const key = `#${attr.replace(/[^a-z0-9]/gi, '')}`;
          names[key] = attr;
          return key;
        }
        return attr;
      },
      value(av) {
        const key = `:v${nv++}`;
        values[key] = av;
        return key;
      },
      path(p) { return p.split('.').map((seg) => seg.replace(/^[a-z0-9]+/i, (a) => this.name(a))).join('.'); },
      into(req) {
        if (Object.keys(names).length) req.ExpressionAttributeNames = { ...(req.ExpressionAttributeNames || {}), ...names };
        if (Object.keys(values).length) req.ExpressionAttributeValues = { ...(req.ExpressionAttributeValues || {}), ...values };
        return req;
      },
    };
  }
  const PATHS = ['a', 'b', 'n', 's', 'status', 'm', 'm.x', 'm.y', 'm.z.q', 'm.lst', 'm.lst[0]', 'l', 'l[0]', 'l[1]', 'l[3]',
    'l[0].x', 'ss', 'ns', 'bs', 'flag', 'nope', 'm.nope'];
  const randomPath = (t) => (chance(0.1) ? pick(Object.keys(info[t].types)) : pick(PATHS));
  const compareValue = () => (chance(0.7) ? scalar(pick(['N', 'S'])) : anyValue(1));

  // A condition (ConditionExpression or FilterExpression) over the item's attributes.
  function condition(ctx, t, depth = 0) {
    if (depth < 2 && chance(0.3)) {
      const op = pick(['AND', 'OR']);
      const c = `${condition(ctx, t, depth + 1)} ${op} ${condition(ctx, t, depth + 1)}`;
      return chance(0.5) ? `(${c})` : c;
    }
    if (depth < 2 && chance(0.08)) return `NOT ${condition(ctx, t, depth + 1)}`;
    const p = ctx.path(randomPath(t));
    switch (int(10)) {
      case 0: return `attribute_exists(${p})`;
      case 1: return `attribute_not_exists(${p})`;
      case 2: return `attribute_type(${p}, ${ctx.value({ S: pick(['S', 'N', 'B', 'M', 'L', 'SS', 'NS', 'BS', 'BOOL', 'NULL']) })})`;
      case 3: return `begins_with(${p}, ${ctx.value(scalar(pick(['S', 'B'])))})`;
      case 4: return `contains(${p}, ${ctx.value(scalar(pick(['S', 'N', 'B'])))})`;
      case 5: return `size(${p}) ${pick(['=', '<', '<=', '>', '>=', '<>'])} ${ctx.value(scalar('N'))}`;
      case 6: {
        const [lo, hi] = [scalar('N'), scalar('N')];
        return `${p} BETWEEN ${ctx.value(lo)} AND ${ctx.value(hi)}`;
      }
      case 7: return `${p} IN (${Array.from({ length: 1 + int(3) }, () => ctx.value(compareValue())).join(', ')})`;
      default: return `${p} ${pick(['=', '<>', '<', '<=', '>', '>='])} ${ctx.value(compareValue())}`;
    }
  }

  function key(t) {
    const { types, hash, range } = info[t];
    const k = { [hash]: scalar(types[hash]) };
    if (range) k[range] = scalar(types[range]);
    return k;
  }
  function item(t) {
    const { types, hash, range } = info[t];
    const it = key(t);
    for (const attr of Object.keys(types)) {
      if (attr !== hash && attr !== range && chance(0.6)) it[attr] = chance(0.95) ? scalar(types[attr]) : anyValue();
    }
    for (const attr of PLAIN_ATTRS) if (chance(0.4)) it[attr] = attrValue(attr);
    return it;
  }

  // An UpdateExpression of one to three clauses.
  function updateExpression(ctx, t) {
    const clauses = {};
    const add = (kind, text) => { (clauses[kind] = clauses[kind] || []).push(text); };
    const used = new Set();
    const freshPath = (choices) => {
      const p = pick(choices);
      if (used.has(p) && !chance(0.05)) return null; // a repeated path is refused (overlap)
      used.add(p);
      return p;
    };
    const n = 1 + int(3);
    for (let i = 0; i < n; i++) {
      const kind = pick(['SET', 'SET', 'SET', 'REMOVE', 'ADD', 'DELETE']);
      if (kind === 'SET') {
        const p = freshPath(['a', 'b', 'n', 's', 'status', 'm', 'm.x', 'm.y', 'm.z.q', 'm.lst[0]', 'm.new', 'l', 'l[0]', 'l[1]',
          'l[5]', 'flag', 'nope.x']);
        if (!p) continue;
        const src = ctx.path(pick(['n', 'm.x', 'l[0]', 'a', 'nope']));
        const lst = () => ctx.value({ L: Array.from({ length: 1 + int(2) }, () => scalar(pick(['N', 'S']))) });
        let v;
        switch (int(8)) {
          case 0: v = `${src} ${pick(['+', '-'])} ${ctx.value(scalar('N'))}`; break;
          case 1: v = `list_append(${ctx.path(pick(['l', 'm.lst', 'nope']))}, ${lst()})`; break;
          case 2: v = `list_append(${lst()}, ${ctx.path(pick(['l', 'm.lst']))})`; break;
          case 3: v = `if_not_exists(${ctx.path(p)}, ${ctx.value(attrValue(p.split(/[.[]/)[0]))})`; break;
          case 4: v = `if_not_exists(${src}, ${ctx.value(scalar('N'))}) + ${ctx.value(scalar('N'))}`; break;
          case 5: v = src; break;
          default: v = ctx.value(attrValue(p.split(/[.[]/)[0]));
        }
        add('SET', `${ctx.path(p)} = ${v}`);
      } else if (kind === 'REMOVE') {
        const p = freshPath(['a', 'b', 'm.x', 'm.z', 'l[0]', 'l[2]', 'ss', 'nope', 'm.lst[1]']);
        if (p) add('REMOVE', ctx.path(p));
      } else if (kind === 'ADD') {
        const p = freshPath(['n', 'ss', 'ns', 'bs', 'a', 'newn', 'newset']);
        if (!p) continue;
        const v = p === 'ss' || p === 'newset' ? setOf('S') : p === 'ns' ? setOf('N') : p === 'bs' ? setOf('B')
          : chance(0.85) ? scalar('N') : anyValue();
        add('ADD', `${ctx.path(p)} ${ctx.value(v)}`);
      } else {
        const p = freshPath(['ss', 'ns', 'bs', 'a']);
        if (!p) continue;
        const v = p === 'ns' ? setOf('N') : p === 'bs' ? setOf('B') : chance(0.9) ? setOf('S') : scalar('S');
        add('DELETE', `${ctx.path(p)} ${ctx.value(v)}`);
      }
    }
    if (!Object.keys(clauses).length) add('SET', `${ctx.path('a')} = ${ctx.value(scalar('S'))}`);
    return Object.entries(clauses).map(([k, list]) => `${k} ${list.join(', ')}`).join(' ');
  }

  function projection(ctx, t) {
    const paths = some(['a', 'n', 'm.x', 'm.z', 'l[0]', 'l[1].x', 'ss', 'status', 'nope', ...Object.keys(info[t].types)], 1 + int(3));
    return paths.map((p) => ctx.path(p)).join(', ');
  }
  const returnValues = (choices) => (chance(0.5) ? pick(choices) : undefined);
  const tableOf = () => int(tables.length);
  const T = (t) => `$T${t}`;

  function putItem(t) {
    const ctx = context();
    const req = { TableName: T(t), Item: item(t) };
    if (chance(0.4)) req.ConditionExpression = condition(ctx, t);
    req.ReturnValues = returnValues(['NONE', 'ALL_OLD']);
    if (req.ConditionExpression && chance(0.2)) req.ReturnValuesOnConditionCheckFailure = 'ALL_OLD';
    return ['PutItem', ctx.into(req)];
  }
  function updateItem(t) {
    const ctx = context();
    const req = { TableName: T(t), Key: key(t), UpdateExpression: updateExpression(ctx, t) };
    if (chance(0.3)) req.ConditionExpression = condition(ctx, t);
    req.ReturnValues = returnValues(['NONE', 'ALL_OLD', 'UPDATED_OLD', 'ALL_NEW', 'UPDATED_NEW']);
    if (req.ConditionExpression && chance(0.2)) req.ReturnValuesOnConditionCheckFailure = 'ALL_OLD';
    return ['UpdateItem', ctx.into(req)];
  }
  function deleteItem(t) {
    const ctx = context();
    const req = { TableName: T(t), Key: key(t) };
    if (chance(0.4)) req.ConditionExpression = condition(ctx, t);
    req.ReturnValues = returnValues(['NONE', 'ALL_OLD']);
    return ['DeleteItem', ctx.into(req)];
  }
  function getItem(t) {
    const ctx = context();
    const req = { TableName: T(t), Key: key(t) };
    if (chance(0.5)) req.ProjectionExpression = projection(ctx, t);
    if (chance(0.3)) req.ConsistentRead = true;
    return ['GetItem', ctx.into(req)];
  }
  function query(t) {
    const ctx = context();
    const { types, hash, range, indexes } = info[t];
    const req = { TableName: T(t) };
    let h = hash;
    let rk = range;
    if (indexes.length && chance(0.5)) {
      const ix = pick(indexes);
      req.IndexName = ix.name;
      h = ix.hash;
      rk = ix.range;
    }
    const typed = (attr) => (chance(0.95) ? scalar(types[attr]) : scalar(pick(KEY_TYPES)));
    let kc = `${ctx.name(h)} = ${ctx.value(typed(h))}`;
    if (rk && chance(0.7)) {
      const name = ctx.name(rk);
      const op = pick(['=', '<', '<=', '>', '>=', 'BETWEEN', 'begins_with']);
      const rc = op === 'BETWEEN' ? `${name} BETWEEN ${ctx.value(typed(rk))} AND ${ctx.value(typed(rk))}`
        : op === 'begins_with' ? `begins_with(${name}, ${ctx.value(typed(rk))})` : `${name} ${op} ${ctx.value(typed(rk))}`;
      kc = chance(0.8) ? `${kc} AND ${rc}` : `${rc} AND ${kc}`;
    }
    req.KeyConditionExpression = kc;
    if (chance(0.3)) req.FilterExpression = condition(ctx, t);
    if (chance(0.3)) req.ProjectionExpression = projection(ctx, t);
    else if (chance(0.15)) req.Select = pick(['COUNT', 'ALL_ATTRIBUTES', 'ALL_PROJECTED_ATTRIBUTES']);
    if (chance(0.3)) req.ScanIndexForward = false;
    const step = { op: 'Query', req: ctx.into(req) };
    if (chance(0.5)) { req.Limit = 1 + int(4); step.page = true; }
    return step;
  }
  function scan(t) {
    const ctx = context();
    const req = { TableName: T(t) };
    const { indexes } = info[t];
    if (indexes.length && chance(0.3)) req.IndexName = pick(indexes).name;
    if (chance(0.3)) req.FilterExpression = condition(ctx, t);
    if (chance(0.3)) req.ProjectionExpression = projection(ctx, t);
    else if (chance(0.1)) req.Select = 'COUNT';
    const step = { op: 'Scan', req: ctx.into(req), page: true };
    if (chance(0.4)) req.Limit = 1 + int(5);
    if (chance(0.3)) step.segments = 1 + int(4);
    return step;
  }
  function batchWrite() {
    const RequestItems = {};
    const n = 1 + int(5);
    for (let i = 0; i < n; i++) {
      const t = tableOf();
      (RequestItems[T(t)] = RequestItems[T(t)] || []).push(chance(0.7) ? { PutRequest: { Item: item(t) } }
        : { DeleteRequest: { Key: key(t) } });
    }
    return ['BatchWriteItem', { RequestItems }];
  }
  function batchGet() {
    const RequestItems = {};
    const n = 1 + int(5);
    for (let i = 0; i < n; i++) {
      const t = tableOf();
      const entry = RequestItems[T(t)] = RequestItems[T(t)] || { Keys: [] };
      entry.Keys.push(key(t));
      if (chance(0.2) && !entry.ProjectionExpression) {
        const ctx = context();
        entry.ProjectionExpression = projection(ctx, t);
        ctx.into(entry);
      }
    }
    return ['BatchGetItem', { RequestItems }];
  }
  function transactWrite() {
    const n = 1 + int(4);
    const TransactItems = [];
    for (let i = 0; i < n; i++) {
      const t = tableOf();
      const ctx = context();
      switch (int(4)) {
        case 0: {
          const Put = { TableName: T(t), Item: item(t) };
          if (chance(0.4)) Put.ConditionExpression = condition(ctx, t);
          TransactItems.push({ Put: ctx.into(Put) });
          break;
        }
        case 1: {
          const Update = { TableName: T(t), Key: key(t), UpdateExpression: updateExpression(ctx, t) };
          if (chance(0.3)) Update.ConditionExpression = condition(ctx, t);
          TransactItems.push({ Update: ctx.into(Update) });
          break;
        }
        case 2: {
          const Delete = { TableName: T(t), Key: key(t) };
          if (chance(0.3)) Delete.ConditionExpression = condition(ctx, t);
          TransactItems.push({ Delete: ctx.into(Delete) });
          break;
        }
        default: {
          const ConditionCheck = { TableName: T(t), Key: key(t), ConditionExpression: condition(ctx, t) };
          if (chance(0.2)) ConditionCheck.ReturnValuesOnConditionCheckFailure = 'ALL_OLD';
          TransactItems.push({ ConditionCheck: ctx.into(ConditionCheck) });
        }
      }
    }
    return ['TransactWriteItems', { TransactItems }];
  }
  function transactGet() {
    const n = 1 + int(4);
    return ['TransactGetItems', { TransactItems: Array.from({ length: n }, () => {
      const t = tableOf();
      const ctx = context();
      const Get = { TableName: T(t), Key: key(t) };
      if (chance(0.3)) Get.ProjectionExpression = projection(ctx, t);
      return { Get: ctx.into(Get) };
    }) }];
  }

  // ------------------------------------------------ invalid mutations --
  // Each turns a valid request into one DynamoDB refuses (or, rarely, accepts oddly).
  const firstExpressionField = (req) => ['UpdateExpression', 'ConditionExpression', 'KeyConditionExpression',
    'FilterExpression', 'ProjectionExpression'].find((f) => req[f]);
  const MUTATIONS = [
    (req) => { req.ExpressionAttributeValues = { ...(req.ExpressionAttributeValues || {}), ':unused': { S: 'u' } }; },
    (req) => { req.ExpressionAttributeNames = { ...(req.ExpressionAttributeNames || {}), '#unused': 'u' }; },
    (req) => { const f = firstExpressionField(req); if (f) req[f] = req[f].replace(/:v\d+/, ':undefined'); },
    (req) => { const f = firstExpressionField(req); if (f) req[f] = req[f].replace(/#[a-z0-9]+/, '#undefined'); },
    (req) => { const f = firstExpressionField(req); if (f) req[f] = req[f].replace(/#status/, 'status').replace(/#([a-z]+)/, '$1'); },
    (req) => { const f = firstExpressionField(req); if (f) req[f] = `${req[f]} ${pick([')', 'AND', '=', ',', '+'])}`; },
    (req) => { const f = firstExpressionField(req); if (f) req[f] = req[f].replace(/ = /, pick([' == ', ' =< ', ' = = '])); },
    (req) => { if (req.Key) { const k = Object.keys(req.Key)[0]; req.Key[k] = scalar(pick(KEY_TYPES)); } },
    (req) => { if (req.Key) delete req.Key[Object.keys(req.Key).pop()]; },
    (req) => { if (req.Key) req.Key.extra = scalar('S'); },
    (req) => { if (req.Item) delete req.Item[Object.keys(req.Item)[0]]; },
    (req) => { const o = req.Item || req.Key; if (o) { const k = Object.keys(o)[0]; o[k] = pick([{ S: '' }, { B: '' }, { N: 'abc' }, { N: '1e200' }, { S: 'k'.repeat(2049) }]); } },
    (req) => { if (req.Item) req.Item.big = { S: 'x'.repeat(pick([390000, 409000, 420000])) }; },
    (req) => { if (req.Item) req.Item.bad = pick([{ SS: [] }, { NS: ['1', '1.0'] }, { S: 'a', N: '1' }, { N: '' }, { L: [{ SS: [] }] }]); },
    (req) => { req.TableName = pick(['$TX', 'ab', 'bad name!']); },
    (req) => { if ('ReturnValues' in req) req.ReturnValues = pick(['ALL', 'UPDATED_NEW', 'ALL_NEW', 'none']); },
    (req) => { req.ExpressionAttributeValues = {}; },
    (req) => { req.ExpressionAttributeNames = {}; },
    (req) => { if (req.ExpressionAttributeValues) { const k = Object.keys(req.ExpressionAttributeValues)[0]; if (k) req.ExpressionAttributeValues[k] = pick([{ N: 'x1' }, { SS: [] }, {}, { S: 1 }]); } },
    (req) => { if ('Limit' in req || req.KeyConditionExpression) req.Limit = pick([0, -1]); },
    (req) => { if (req.KeyConditionExpression) req.KeyConditionExpression = req.KeyConditionExpression.replace(' = ', pick([' < ', ' <> '])); },
    (req) => { if (req.KeyConditionExpression) req.IndexName = 'nosuchindex'; },
    (req) => { if (req.UpdateExpression) req.UpdateExpression = `SET ${pick(['pk', 'sk'])} = :vk`, req.ExpressionAttributeValues = { ':vk': { S: 'k' } }, delete req.ExpressionAttributeNames, delete req.ConditionExpression; },
    (req) => { if (req.ProjectionExpression) req.ProjectionExpression += `, ${req.ProjectionExpression.split(', ')[0]}`; },
    (req) => { if (req.ProjectionExpression) req.ProjectionExpression += ', m, m.x'; },
  ];
  function invalid(op, req) {
    const copy = JSON.parse(JSON.stringify(req));
    const target = copy.TransactItems ? Object.values(pick(copy.TransactItems))[0] : copy;
    if (copy.RequestItems) {
      // batches: duplicate keys, or too many, or an unknown table
      const tn = pick(Object.keys(copy.RequestItems));
      const list = copy.RequestItems[tn];
      switch (int(3)) {
        case 0: if (Array.isArray(list)) list.push(JSON.parse(JSON.stringify(list[0]))); else list.Keys.push(JSON.parse(JSON.stringify(list.Keys[0]))); break;
        case 1: copy.RequestItems.$TX = list; break;
        default: if (Array.isArray(list)) list.push({ PutRequest: { Item: { nokey: { S: 'x' } } } }); else list.Keys.push({ nokey: { S: 'x' } });
      }
      return copy;
    }
    if (copy.TransactItems && chance(0.3)) {
      copy.TransactItems.push(JSON.parse(JSON.stringify(copy.TransactItems[0])));
      return copy;
    }
    pick(MUTATIONS)(target);
    return copy;
  }

  // A CreateTable that DynamoDB refuses.
  function badCreateTable() {
    const def = JSON.parse(JSON.stringify(tableDef()));
    switch (int(5)) {
      case 0: def.AttributeDefinitions.push({ AttributeName: 'unused', AttributeType: 'S' }); break;
      case 1: def.AttributeDefinitions.shift(); break;
      case 2: def.KeySchema = [{ AttributeName: 'pk', KeyType: 'RANGE' }]; break;
      case 3: def.AttributeDefinitions[0].AttributeType = pick(['BOOL', 'SS', 'X']); break;
      default: def.LocalSecondaryIndexes = [{ IndexName: 'lsix', KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }], Projection: { ProjectionType: 'ALL' } }];
    }
    return { TableName: '$TC', ...def };
  }

  const steps = [];
  const count = 10 + int(31);
  for (let i = 0; i < count; i++) {
    const t = tableOf();
    let step;
    const roll = int(100);
    if (roll < 20) step = putItem(t);
    else if (roll < 35) step = updateItem(t);
    else if (roll < 41) step = deleteItem(t);
    else if (roll < 50) step = getItem(t);
    else if (roll < 64) step = query(t);
    else if (roll < 72) step = scan(t);
    else if (roll < 79) step = batchWrite();
    else if (roll < 84) step = batchGet();
    else if (roll < 92) step = transactWrite();
    else if (roll < 96) step = transactGet();
    else if (roll < 98) step = ['DescribeTable', { TableName: T(t) }];
    else step = ['CreateTable', badCreateTable()];
    if (Array.isArray(step)) step = { op: step[0], req: step[1] };
    if (step.op !== 'CreateTable' && step.op !== 'DescribeTable' && chance(0.15)) {
      step.req = invalid(step.op, step.req);
      step.invalid = true;
    }
    steps.push(step);
  }
  return { seed, tables: tables.map((def, i) => ({ TableName: T(i), ...def })), steps };
}

module.exports = { generator, sequenceSeed, prng };
