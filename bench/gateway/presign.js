// bench/gateway/presign.js — writes COUNT DynamoDB requests signed with
// SigV4 as an AWS SDK signs them, one per line ("<X-Amz-Date>\t<Authorization>\t<body>"),
// for bench/gateway/signed.lua: the gateway keeps no record of the requests
// it served (AWS serves a resent request again), so requests signed in
// advance measure its signature check without putting the signing cost on
// the load generator.
//
//   node bench/gateway/presign.js HOST KEY_ID SECRET OPERATION USERS COUNT [FIRST] > FILE
//
// GetItem: a random preloaded item; Query: pk = a random user AND
// begins_with(sk, "ORDER#") (16 items); PutItem: a new item each (users
// from FIRST on, 16 orders each), the shape bench/gateway/load.js writes.
'use strict';
const crypto = require('crypto');

const [host, keyId, secret, operation, usersArg, countArg, firstArg] = process.argv.slice(2);
const users = Number(usersArg);
const count = Number(countArg);
const first = Number(firstArg || 0);

// The n-th order (0..15) of user u, as load.js and request.lua write it.
function item(u, n) {
  const order = String(u * 16 + n).padStart(8, '0');
  const day = String(n + 1).padStart(2, '0');
  return `{"pk":{"S":"USER#${u}"},"sk":{"S":"ORDER#2026-01-${day}#${order}"},"orderId":{"S":"${order}"},`
    + `"status":{"S":"${n % 3 !== 0 ? 'SHIPPED' : 'PENDING'}"},"total":{"N":"${u % 500 + n}.95"},"currency":{"S":"EUR"},`
    + `"quantity":{"N":"${n % 5 + 1}"},"createdAt":{"S":"2026-01-${day}T10:15:00Z"},`
    + '"shipTo":{"M":{"street":{"S":"12 rue de la République"},"city":{"S":"Lyon"},"zip":{"S":"69002"}}},'
    + '"tags":{"SS":["gift","express"]},"note":{"S":"Leave the parcel with the concierge if nobody answers."}}';
}

// The body of the i-th request.
function body(i) {
  const u = Math.floor(Math.random() * users);
  const n = Math.floor(Math.random() * 16);
  switch (operation) {
    case 'GetItem':
      return `{"TableName":"GwBench","Key":{"pk":{"S":"USER#${u}"},"sk":{"S":"ORDER#2026-01-${String(n + 1).padStart(2, '0')}#${String(u * 16 + n).padStart(8, '0')}"}}}`;
    case 'Query':
      return '{"TableName":"GwBench","KeyConditionExpression":"pk = :p AND begins_with(sk, :s)",'
        + `"ExpressionAttributeValues":{":p":{"S":"USER#${u}"},":s":{"S":"ORDER#"}}}`;
    case 'PutItem':
      return `{"TableName":"GwBench","Item":${item(first + Math.floor(i / 16), i % 16)}}`;
    default:
      throw new Error(`unknown operation ${operation}`);
  }
}

const sha256 = (text) => crypto.createHash('sha256').update(text, 'utf8').digest('hex');
const hmac = (key, text) => crypto.createHmac('sha256', key).update(text, 'utf8').digest();
const amzDate = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
const day = amzDate.slice(0, 8);
const scope = `${day}/us-east-1/dynamodb/aws4_request`;
const signedHeaders = 'content-type;host;x-amz-date;x-amz-target';
let signingKey = hmac(`AWS4${secret}`, day);
for (const part of ['us-east-1', 'dynamodb', 'aws4_request']) signingKey = hmac(signingKey, part);

const out = [];
for (let i = 0; i < count; i++) {
  const text = body(i);
  const canonical = `POST\n/\n\ncontent-type:application/x-amz-json-1.0\nhost:${host}\nx-amz-date:${amzDate}\n`
    + `x-amz-target:DynamoDB_20120810.${operation}\n\n${signedHeaders}\n${sha256(text)}`;
  const toSign = `AWS4-HMAC-SHA256\n${amzDate}\n${scope}\n${sha256(canonical)}`;
  const signature = crypto.createHmac('sha256', signingKey).update(toSign, 'utf8').digest('hex');
  out.push(`${amzDate}\tAWS4-HMAC-SHA256 Credential=${keyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}\t${text}`);
}
process.stdout.write(`${out.join('\n')}\n`);
