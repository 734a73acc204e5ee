// bench/gateway/load.js — creates the benchmark table (pk S, sk S) on one
// DynamoDB endpoint and preloads USERS users of 16 orders each with
// BatchWriteItem over plain HTTP (an AWS SDK would cost more CPU than the
// targets, and the preload is not measured).
//
//   node bench/gateway/load.js http://127.0.0.1:8101 USERS
//
// Items: pk USER#<u>, sk ORDER#2026-01-<dd>#<u*16+n> for n in 0..15, about
// 300 bytes; bench/gateway/request.lua builds the same keys and items.
'use strict';
const http = require('http');

const [endpoint, usersArg] = process.argv.slice(2);
const users = Number(usersArg);
const table = 'GwBench';
const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
// dynalite and DynamoDB Local parse a SigV4 Authorization header but do not
// check the signature; the gateway runs with --development.
const auth = 'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/dynamodb/aws4_request, ' +
  'SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=' + 'ab'.repeat(32);

// One DynamoDB request; resolves to the parsed response, rejects on a non-200.
function call(action, body) {
  return new Promise((resolve, reject) => {
    const data = JSON.stringify(body);
    const req = http.request(endpoint + '/', {
      method: 'POST', agent,
      headers: {
        'Content-Type': 'application/x-amz-json-1.0', 'X-Amz-Target': 'DynamoDB_20120810.' + action,
        'X-Amz-Date': '20260101T000000Z', Authorization: auth, 'Content-Length': Buffer.byteLength(data),
      },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => { text += chunk; });
      res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(text))
        : reject(new Error(`${endpoint} ${action}: ${res.statusCode} ${text}`))));
    });
    req.on('error', reject);
    req.end(data);
  });
}

// The n-th order (0..15) of user u, in DynamoDB JSON.
function item(u, n) {
  const order = String(u * 16 + n).padStart(8, '0');
  const day = String(n + 1).padStart(2, '0');
  return {
    pk: { S: `USER#${u}` }, sk: { S: `ORDER#2026-01-${day}#${order}` }, orderId: { S: order },
    status: { S: n % 3 ? 'SHIPPED' : 'PENDING' }, total: { N: `${(u % 500) + n}.95` }, currency: { S: 'EUR' },
    quantity: { N: String(n % 5 + 1) }, createdAt: { S: `2026-01-${day}T10:15:00Z` },
    shipTo: { M: { street: { S: '12 rue de la République' }, city: { S: 'Lyon' }, zip: { S: '69002' } } },
    tags: { SS: ['gift', 'express'] }, note: { S: 'Leave the parcel with the concierge if nobody answers.' },
  };
}

// Creates the table, waits until it is ACTIVE, then writes all items, 4 batches in flight.
async function main() {
  await call('CreateTable', {
    TableName: table, BillingMode: 'PAY_PER_REQUEST',
    KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }],
    AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' }],
  });
  while ((await call('DescribeTable', { TableName: table })).Table.TableStatus !== 'ACTIVE') {
    await new Promise((r) => setTimeout(r, 100));
  }
  const batches = [];
  for (let i = 0; i < users * 16; i += 25) {
    const puts = [];
    for (let j = i; j < Math.min(i + 25, users * 16); j++) puts.push({ PutRequest: { Item: item(Math.floor(j / 16), j % 16) } });
    batches.push(puts);
  }
  let next = 0;
  const worker = async () => {
    while (next < batches.length) {
      const res = await call('BatchWriteItem', { RequestItems: { [table]: batches[next++] } });
      if (Object.keys(res.UnprocessedItems || {}).length) throw new Error(`${endpoint}: unprocessed items`);
    }
  };
  await Promise.all([worker(), worker(), worker(), worker()]);
  agent.destroy();
}

main().catch((err) => { console.error(err.message); process.exit(1); });
