// bench/gateway/idle.js — opens COUNT keep-alive connections to the
// gateway, sends one signed GetItem on each (lines of a file that
// bench/gateway/presign.js wrote), checks its 200, and then keeps every
// connection open and idle; prints "idle COUNT" once all are, and stays
// until it is killed.  For bench/gateway_memory_bench.sh.
//
//   node bench/gateway/idle.js HOST PORT FILE COUNT
'use strict';
const fs = require('fs');
const net = require('net');

const [host, portArg, file, countArg] = process.argv.slice(2);
const count = Number(countArg);
const lines = fs.readFileSync(file, 'utf8').split('\n').filter((line) => line);
let served = 0;

// Sends the i-th signed request on a new connection and counts its answer.
function open(i) {
  const [date, auth, body] = lines[i % lines.length].split('\t');
  const socket = net.connect(Number(portArg), host, () => {
    socket.write(`POST / HTTP/1.1\r\nHost: ${host}:${portArg}\r\nContent-Type: application/x-amz-json-1.0\r\n`
      + `X-Amz-Target: DynamoDB_20120810.GetItem\r\nX-Amz-Date: ${date}\r\nAuthorization: ${auth}\r\n`
      + `Connection: keep-alive\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  });
  let answer = '';
  socket.on('data', (chunk) => {
    answer += chunk.toString();
    if (answer.includes('\r\n\r\n') && answer.includes('"Item"')) {
      if (!answer.startsWith('HTTP/1.1 200')) {
        console.error(`connection ${i}: ${answer.slice(0, 200)}`);
        process.exit(1);
      }
      answer = '';
      served += 1;
      if (served === count) console.log(`idle ${count}`);
      else if (i + 1 < count) open(i + 1);
    }
  });
  socket.on('error', (error) => { console.error(`connection ${i}: ${error.message}`); process.exit(1); });
  socket.on('close', () => { console.error(`connection ${i} closed by the gateway`); process.exit(1); });
}

open(0);
