// bench/gateway/fuzz.js — sends malformed and hostile SigV4-signed
// DynamoDB requests to ddb-gateway for a bounded time and counts the
// responses by status (bench/gateway_fuzz.sh runs it; no npm packages).
//
//   node bench/gateway/fuzz.js URL KEY_ID SECRET SECONDS [CONNECTIONS] [SEED]
//
// Requests: valid ones for every operation on the tables the script made
// (FuzzHash: pk S; FuzzRange: pk S, sk N, a GSI) and on the models' tables,
// then mutated — values swapped for hostile ones (invalid UTF-8, U+0000,
// lone surrogates, maps nested past 32 levels, numbers such as 1e999999,
// keys and attribute names over their limits, empty names, items over
// 400 KB, expressions over 4 KB, wrong JSON types, NUL bytes, truncation),
// few hot keys written from every connection in opposite orders (deadlocks
// and conflicts).  Prints "sent N", one "status S: N" line per status,
// "5xx N", "errors N" (no HTTP answer at all) and, for the first 5xx of each
// kind, the request; exits 1 when any 5xx or error was seen.
'use strict';
const http = require('http');
const crypto = require('crypto');

const [url, keyId, secret, secondsArg, connArg, seedArg] = process.argv.slice(2);
const seconds = Number(secondsArg || 60);
const connections = Number(connArg || 8);
const target = new URL(url);
const host = target.host;
const agent = new http.Agent({ keepAlive: true, maxSockets: connections });

// A small seeded PRNG (xorshift32), so that a run can be repeated with its seed.
let state = (Number(seedArg) || (Date.now() & 0x7fffffff)) >>> 0 || 1;
const seed = state;
function rnd() {
  state ^= state << 13; state >>>= 0;
  state ^= state >>> 17;
  state ^= state << 5; state >>>= 0;
  return state / 4294967296;
}
const int = (n) => Math.floor(rnd() * n);
const pick = (list) => list[int(list.length)];
const chance = (p) => rnd() < p;

// ---------------------------------------------------------------- SigV4 ----
const hmac = (key, data) => crypto.createHmac('sha256', key).update(data).digest();
// The headers of a request signed as the AWS SDKs sign it (header values as latin1 bytes).
function signedHeaders(action, body) {
  const now = new Date();
  const amzDate = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+/, '');
  const day = amzDate.slice(0, 8);
  const scope = `${day}/us-east-1/dynamodb/aws4_request`;
  const headers = {
    'content-type': 'application/x-amz-json-1.0', host, 'x-amz-date': amzDate, 'x-amz-target': action,
  };
  const names = Object.keys(headers).sort().join(';');
  const canonical = `POST\n/\n\n${Object.keys(headers).sort().map((h) => `${h}:${headers[h]}\n`).join('')}\n${names}\n`
    + crypto.createHash('sha256').update(body).digest('hex');
  const toSign = `AWS4-HMAC-SHA256\n${amzDate}\n${scope}\n`
    + crypto.createHash('sha256').update(Buffer.from(canonical, 'latin1')).digest('hex');
  let key = hmac(`AWS4${secret}`, day);
  for (const part of ['us-east-1', 'dynamodb', 'aws4_request']) key = hmac(key, part);
  return {
    'Content-Type': headers['content-type'], 'X-Amz-Date': amzDate, 'X-Amz-Target': action,
    Authorization: `AWS4-HMAC-SHA256 Credential=${keyId}/${scope}, SignedHeaders=${names}, `
      + `Signature=${crypto.createHmac('sha256', key).update(toSign).digest('hex')}`,
    'Content-Length': body.length,
  };
}

// ------------------------------------------------------- valid requests ----
const hot = ['h0', 'h1', 'h2', 'h3'];
const S = (s) => ({ S: s });
const N = (n) => ({ N: String(n) });
const hashKey = () => ({ pk: S(chance(0.5) ? pick(hot) : `k${int(1000)}`) });
const rangeKey = () => ({ pk: S(chance(0.5) ? pick(hot) : `k${int(100)}`), sk: N(int(20)) });
function item(key) {
  const it = { ...key, n: N(int(100)), s: S('text'), b: { B: 'AAEC' }, ss: { SS: ['a', 'b'] },
    l: { L: [N(1), S('x'), { M: { x: { BOOL: true } } }] }, m: { M: { a: { NULL: true }, n: N(2) } } };
  if (chance(0.3)) it.GSI1PK = S(`g${int(5)}`);
  return it;
}
const userId = () => pick(['0b7e4a5c-1d2e-4f60-8a9b-0c1d2e3f4a5b', '11111111-2222-4333-8444-555555555555']);
// A valid item for a model's table (or nearly: the models check more than DynamoDB does).
function modelPut() {
  const u = userId();
  return pick([
    // a profile without its primary email breaks S8 at commit; two users' records of one address break S7
    { TableName: 'UserServiceTable', Item: { PK: S(`USER#${u}`), SK: S('PROFILE'), userId: S(u), status: S('active'),
      email: S('a@example.com'), version: N(1), firstName: S('A'), lastName: S('B'), createdAt: S('2026-01-01T00:00:00Z'),
      updatedAt: S('2026-01-01T00:00:00Z') } },
    { TableName: 'UserServiceTable', Item: { PK: S(`USER#${u}`), SK: S('EMAIL#e1'), emailId: S('e1'),
      userId: S(u), email: S('a@example.com'), GSI1PK: S('EMAIL#a@example.com'), GSI1SK: S(`USER#${u}`),
      isPrimary: { BOOL: chance(0.5) }, isVerified: { BOOL: chance(0.5) }, createdAt: S('2026-01-01T00:00:00Z') } },
    // two sources of one write key break U4 (a unique index)
    { TableName: 'sourcesTable', Item: { id: S(`src${int(5)}`), name: S('n'), writeKeyHash: S(pick(['a', 'b']).repeat(64)) } },
    { TableName: 'MailshotTable', Item: { PK: S(`SUB#${int(3)}`), SK: S('PROFILE'), email: S('x@example.com') } },
    { TableName: 'apps', Item: { appName: S(`app${int(3)}`), quota: N(int(1000)) } },
    { TableName: 'appDataJson', Item: { appUser: S(`app0#u${int(3)}`), key: S(`k${int(3)}`), value: S('v') } },
    { TableName: 'sourcesTable', Item: { id: S(`src${int(3)}`), writeKey: S(`wk${int(2)}`) } },
    { TableName: 'profilesTable', Item: { userId: S(`u${int(3)}`), sortKey: S('PROFILE') } },
  ]);
}
function valid() {
  const range = chance(0.5);
  const TableName = range ? 'FuzzRange' : 'FuzzHash';
  const key = range ? rangeKey() : hashKey();
  const values = { ':v': N(int(10)), ':s': S('text') };
  switch (int(17)) {
    case 0: return ['PutItem', chance(0.5) ? modelPut() : { TableName, Item: item(key),
      ConditionExpression: chance(0.3) ? 'attribute_not_exists(pk)' : undefined, ReturnValues: chance(0.3) ? 'ALL_OLD' : undefined }];
    case 1: return ['GetItem', { TableName, Key: key, ProjectionExpression: chance(0.3) ? 'n, m.a, l[2].x' : undefined }];
    case 2: return ['UpdateItem', { TableName, Key: key, UpdateExpression: 'SET n = if_not_exists(n, :v) + :v, s = :s ADD c :v',
      ExpressionAttributeValues: values, ReturnValues: 'ALL_NEW' }];
    case 3: return ['DeleteItem', { TableName, Key: key, ConditionExpression: chance(0.5) ? 'n > :v' : undefined,
      ExpressionAttributeValues: chance(0.5) ? { ':v': values[':v'] } : undefined }];
    case 4: return ['Query', { TableName, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': key.pk },
      Limit: int(5) + 1, FilterExpression: chance(0.3) ? 'attribute_exists(n)' : undefined, ScanIndexForward: chance(0.5) }];
    case 5: return ['Scan', { TableName, Limit: int(50) + 1, Segment: 0, TotalSegments: 1 }];
    case 6: return ['Query', { TableName: 'FuzzRange', IndexName: 'GSI1', KeyConditionExpression: 'GSI1PK = :g',
      ExpressionAttributeValues: { ':g': S(`g${int(5)}`) } }];
    case 7: {
      // hot keys in a random order from every connection: deadlocks and conflicts
      const keys = hot.slice().sort(() => rnd() - 0.5).slice(0, 2 + int(3));
      return ['BatchWriteItem', { RequestItems: { FuzzHash: keys.map((k) => (chance(0.8)
        ? { PutRequest: { Item: item({ pk: S(k) }) } } : { DeleteRequest: { Key: { pk: S(k) } } })) } }];
    }
    case 8: return ['BatchGetItem', { RequestItems: { FuzzHash: { Keys: hot.map((k) => ({ pk: S(k) })) } } }];
    case 9: {
      const keys = hot.slice().sort(() => rnd() - 0.5).slice(0, 2 + int(3));
      return ['TransactWriteItems', { ClientRequestToken: chance(0.2) ? `tok${int(50)}` : undefined,
        TransactItems: keys.map((k) => pick([
          { Put: { TableName: 'FuzzHash', Item: item({ pk: S(k) }) } },
          { Update: { TableName: 'FuzzHash', Key: { pk: S(k) }, UpdateExpression: 'ADD c :one',
            ExpressionAttributeValues: { ':one': N(1) } } },
          { ConditionCheck: { TableName: 'FuzzHash', Key: { pk: S(k) }, ConditionExpression: 'attribute_exists(pk)' } },
          { Delete: { TableName: 'FuzzHash', Key: { pk: S(k) } } },
        ])) }];
    }
    case 10: return ['TransactGetItems', { TransactItems: hot.map((k) => ({ Get: { TableName: 'FuzzHash', Key: { pk: S(k) } } })) }];
    case 11: return ['ExecuteStatement', pick([
      { Statement: 'SELECT * FROM "FuzzHash" WHERE pk = ?', Parameters: [key.pk] },
      { Statement: `INSERT INTO "FuzzHash" VALUE {'pk': ?, 'n': 1}`, Parameters: [S(`k${int(1000)}`)] },
      { Statement: 'UPDATE "FuzzHash" SET n = n + 1 WHERE pk = ?', Parameters: [S(pick(hot))] },
      { Statement: 'DELETE FROM "FuzzHash" WHERE pk = ?', Parameters: [S(`k${int(1000)}`)] }])];
    case 12: return ['BatchExecuteStatement', { Statements: hot.map((k) => ({ Statement: 'UPDATE "FuzzHash" SET n = 1 WHERE pk = ?',
      Parameters: [S(k)] })) }];
    case 13: return ['ExecuteTransaction', { TransactStatements: hot.slice(0, 2).map((k) => ({
      Statement: 'UPDATE "FuzzHash" SET n = 2 WHERE pk = ?', Parameters: [S(k)] })) }];
    case 14: return [pick(['DescribeTable', 'DescribeTimeToLive', 'ListTables']), { TableName }];
    case 15: {
      const name = `Fz${int(20)}`;
      return chance(0.5) ? ['CreateTable', { TableName: name, BillingMode: 'PAY_PER_REQUEST',
        KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }], AttributeDefinitions: [{ AttributeName: 'id', AttributeType: pick(['S', 'N', 'B']) }] }]
        : ['DeleteTable', { TableName: name }];
    }
    default: return [pick(['UpdateTimeToLive', 'UpdateTable', 'TagResource', 'ListStreams', 'GetShardIterator', 'GetRecords']),
      { TableName, TimeToLiveSpecification: { Enabled: chance(0.5), AttributeName: 'ttl' },
        ResourceArn: `arn:aws:dynamodb:us-east-1:000000000000:table/${TableName}`, Tags: [{ Key: 'k', Value: 'v' }] }];
  }
}

// ------------------------------------------------------- hostile values ----
const deep = (n, leaf, wrap) => { let v = leaf; for (let i = 0; i < n; i++) v = wrap(v); return v; };
// JSON text too deep for JSON.stringify, stood for by a marker string until the body is serialised.
const RAW = [];
const raw = (text) => `@@raw${RAW.push(text) - 1}@@`;
const serialise = (body) => Buffer.from(JSON.stringify(body).replace(/"@@raw(\d+)@@"/g, (m, i) => RAW[i]));
// (built once: a mutation copies the path it changes, never the values)
const HOSTILE_ATTRIBUTE_VALUES = [
    { S: '\u0000' }, { S: 'a\u0000b' }, { N: '1e999999' }, { N: '1e130000' }, { N: '-1e-999999' }, { N: 'NaN' },
    { N: 'Infinity' }, { N: '9'.repeat(39) }, { N: '0x10' }, { N: '' }, { N: ' 1' }, { S: '' }, { B: '' }, { B: '!!!' },
    { SS: [] }, { SS: ['a', 'a'] }, { NS: ['1', '1.0'] }, { BS: ['AA==', 'AA=='] }, { L: null }, { M: [] },
    { S: 'x'.repeat(2049) }, { S: 'é'.repeat(1025) }, { B: Buffer.alloc(2049).toString('base64') },
    { S: 'x'.repeat(410 * 1024) }, { NULL: false }, { BOOL: 'yes' }, { S: 1 }, { N: 1 }, {}, { S: 'a', N: '1' },
    deep(33, { S: 'leaf' }, (v) => ({ M: { a: v } })), deep(200, { S: 'leaf' }, (v) => ({ L: [v] })),
    raw(`${'{"M": {"a": '.repeat(5000)}{"N": "1"}${'}}'.repeat(5000)}`), { M: { '': { S: 'empty name' } } },
    { M: { ['n'.repeat(65536)]: { S: 'long name' } } }, { X: 'unknown type' }, { s: 'lower case' },
];
const HOSTILE_VALUES = [
    null, true, false, 0, -1, 1e308, 2 ** 31, -(2 ** 31) - 1, '', '\u0000', '\ud800', 'x'.repeat(5000), [], {}, [[[]]],
    { '': 1 }, 'ALL_OLD', 'NONE', 'TOTAL', 'INDEXES',
    'a'.repeat(37), 'a'.repeat(36), `#${'n'.repeat(300)} = :v`, 'attribute_exists(' + '('.repeat(500) + 'a' + ')'.repeat(501),
    `${'a.'.repeat(3000)}b`, `${'a AND '.repeat(800)}b`, 'SET #a = :v', 'REMOVE a[99999999999]', 'SET a[0] = :v',
    'begins_with(pk, :v)', 'size(pk) > :v', 'pk IN (' + ':v,'.repeat(120) + ':v)', 'x'.repeat(4097),
    { '#a': '' }, { '#a': 'n'.repeat(65536) }, { ':v': { N: '1e999999' } }, { ':v': {} },
];
// A hostile value: an AttributeValue (alone, or as a key's or a placeholder's) or any JSON.
function hostileValue() {
  const roll = rnd();
  if (roll < 0.2) return pick(HOSTILE_ATTRIBUTE_VALUES);
  if (roll < 0.3) return { [pick(['pk', 'sk', ':v', 'n'])]: pick(HOSTILE_ATTRIBUTE_VALUES) };
  return pick(HOSTILE_VALUES);
}
// Replaces one node of a JSON value (chosen at random, depth first) by a hostile value.
function mutate(value, depth = 0) {
  if (depth > 0 && chance(0.25)) return hostileValue();
  if (Array.isArray(value) && value.length) {
    const copy = value.slice();
    const i = int(copy.length);
    copy[i] = mutate(copy[i], depth + 1);
    if (chance(0.1)) copy.push(hostileValue());
    return copy;
  }
  if (value && typeof value === 'object') {
    const copy = { ...value };
    const keys = Object.keys(copy);
    if (!keys.length || chance(0.1)) {
      copy[pick(['Limit', 'ExclusiveStartKey', 'ExpressionAttributeNames', 'ExpressionAttributeValues', 'Select',
        'ReturnConsumedCapacity', 'ConsistentRead', 'ClientRequestToken', 'IndexName', 'Segment', 'TotalSegments',
        'ProjectionExpression', 'AttributesToGet', 'KeyConditions', 'Expected', 'ScanFilter', 'AttributeUpdates',
        'ReturnValuesOnConditionCheckFailure', 'NextToken', 'ShardIterator', '', 'Unknown'])] = hostileValue();
      return copy;
    }
    // (the table's name mostly kept, so that a request gets past it)
    const k = pick(depth === 0 && keys.length > 1 && chance(0.8) ? keys.filter((key) => key !== 'TableName') : keys);
    if (chance(0.05)) { delete copy[k]; return copy; }
    if (chance(0.05)) { copy[chance(0.5) ? '' : 'n'.repeat(65536)] = copy[k]; delete copy[k]; return copy; }
    copy[k] = mutate(copy[k], depth + 1);
    return copy;
  }
  return hostileValue();
}
// A body at the byte level: invalid UTF-8, NUL bytes, \u0000, truncation, raw nesting, garbage.
function mangle(text) {
  const buf = Buffer.from(text, 'utf8');
  const at = int(buf.length + 1);
  const bytes = pick([[0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf4, 0x90, 0x80, 0x80], [0x00]]);
  switch (int(8)) {
    case 0: { // invalid UTF-8 inside the first string of the body
      const q = buf.indexOf(0x22, buf.indexOf(0x22, buf.indexOf(0x3a) + 1)) + 1;
      return Buffer.concat([buf.subarray(0, q), Buffer.from(bytes), buf.subarray(q)]);
    }
    case 1: return Buffer.concat([buf.subarray(0, at), Buffer.from(bytes), buf.subarray(at)]);
    case 2: return buf.subarray(0, at);
    case 3: return Buffer.from(text.replace(/"(S|N|TableName)": ?"/, (m) => `${m}${pick(['\\u0000', '\\ud800', '\\udc00x', '\\uZZZZ'])}`));
    case 4: return Buffer.from(`${'['.repeat(1 + int(200000))}${']'.repeat(int(3) === 0 ? 0 : 200000)}`.slice(0, 400000));
    case 5: return Buffer.from(`{"TableName": "FuzzHash", "Item": ${'{"M": {"a": '.repeat(int(2) ? 33 : 3000)}{"S": "x"}${'}}'.repeat(int(2) ? 33 : 3000)}}`);
    case 6: return crypto.randomBytes(int(64));
    default: return Buffer.from(pick(['', 'null', '[]', '"x"', '1e999999', '{"Limit": 1e999999}', '{"a":1,"a":2}', '{}', '{"TableName": null}']));
  }
}
const operations = ['PutItem', 'GetItem', 'UpdateItem', 'DeleteItem', 'Query', 'Scan', 'BatchWriteItem', 'BatchGetItem',
  'TransactWriteItems', 'TransactGetItems', 'ExecuteStatement', 'BatchExecuteStatement', 'ExecuteTransaction',
  'CreateTable', 'DescribeTable', 'ListTables', 'DeleteTable', 'UpdateTable', 'UpdateTimeToLive', 'DescribeTimeToLive',
  'TagResource', 'UntagResource', 'ListTagsOfResource', 'ListStreams', 'DescribeStream', 'GetShardIterator', 'GetRecords'];
// One request: [X-Amz-Target, body bytes].
function request() {
  let [action, body] = valid();
  const roll = rnd();
  if (roll < 0.25) return [`DynamoDB_20120810.${action}`, serialise(body)];
  if (roll < 0.75) {
    body = mutate(body);
    for (let i = int(3); i > 0; i--) body = mutate(body);
    return [`DynamoDB_20120810.${chance(0.05) ? pick(operations) : action}`, serialise(body)];
  }
  if (roll < 0.97) return [`DynamoDB_20120810.${action}`, mangle(serialise(chance(0.5) ? body : mutate(body)).toString('utf8'))];
  return [pick([`DynamoDB_20120810.${action}\xff`, 'DynamoDB_20120810.', `DynamoDB_20120810.${'x'.repeat(300)}`,
    'DynamoDBStreams_20120810.GetRecords', `DynamoDB_20120810.${action}\u00e9`]), serialise(body)];
}

// ----------------------------------------------------------------- run ----
const counts = new Map();
const failures = new Map(); // first request of each distinct 5xx answer
let sent = 0;
let errors = 0;
const deadline = Date.now() + seconds * 1000;
// Sends one request; resolves when it is answered.
function send(action, body) {
  return new Promise((resolve) => {
    const req = http.request(url, { method: 'POST', agent, headers: signedHeaders(action, body) }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        counts.set(res.statusCode, (counts.get(res.statusCode) || 0) + 1);
        if (res.statusCode >= 500) {
          // one kind per message shape: byte values, quoted values and numbers left out
          const answer = Buffer.concat(chunks).toString('utf8').slice(0, 300).replace(/0x[0-9a-f]{2}/g, '0x..')
            .replace(/'[^']*'/g, "'…'").replace(/\d+/g, 'N');
          if (!failures.has(answer) && failures.size < 40) failures.set(answer, { action, body });
          failures.count = (failures.count || 0) + 1;
        }
        resolve();
      });
    });
    req.setTimeout(30000, () => req.destroy(new Error('timeout')));
    req.on('error', (e) => {
      errors++;
      if (failures.size < 20) failures.set(`no answer: ${e.message} #${errors}`, { action, body });
      resolve();
    });
    req.end(body);
  });
}
// One connection's loop until the deadline.
async function worker() {
  while (Date.now() < deadline) {
    const [action, body] = request();
    sent++;
    await send(action, body);
  }
}
const show = (body) => {
  const text = body.toString('latin1');
  return JSON.stringify(text.length > 600 ? `${text.slice(0, 400)}...(${body.length} bytes)...${text.slice(-100)}` : text);
};
(async () => {
  const start = Date.now();
  await Promise.all(Array.from({ length: connections }, worker));
  const elapsed = (Date.now() - start) / 1000;
  const fives = [...counts].filter(([s]) => s >= 500).reduce((n, [, c]) => n + c, 0);
  console.log(`seed ${seed}`);
  console.log(`sent ${sent} in ${elapsed.toFixed(1)} s (${Math.round(sent / elapsed)}/s, ${connections} connections)`);
  for (const [status, n] of [...counts].sort((a, b) => a[0] - b[0])) console.log(`status ${status}: ${n}`);
  console.log(`5xx ${fives}`);
  console.log(`errors ${errors}`);
  for (const [answer, { action, body }] of failures) {
    console.log(`--- ${answer}\n    X-Amz-Target: ${JSON.stringify(action)}\n    body: ${show(body)}`);
  }
  agent.destroy();
  process.exit(fives > 0 || errors > 0 ? 1 : 0);
})();
