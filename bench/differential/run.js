// bench/differential/run.js — the differential tester's driver
// (bench/differential.sh runs it): generates sequences (gen.js), sends each
// request to ddb-gateway and to DynamoDB Local, compares the normalised
// responses (compare.js), matches differences against accepted.json, and
// shrinks each new kind of difference to a minimal reproducer written to
// OUT/repro-*.json.
//
//   node run.js --gateway URL --local URL --key ID --secret SECRET --out DIR
//               [--sequences N] [--seed S] [--workers W] [--replay FILE] [--no-shrink] [--shrink-max K]
//   node run.js --reclassify build/differential/differences.jsonl   (no targets: a run's
//               unexplained differences counted against accepted.json as it is now)
'use strict';
const http = require('http');
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const { generator, sequenceSeed } = require('./gen');
const { normalise, combinePages, difference, matchAccepted, stable } = require('./compare');
const { faultsOf } = require('./faults');

const args = {};
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  if (a === '--no-shrink') args.noShrink = true;
  else args[a.replace(/^--/, '')] = process.argv[++i];
}
const SEQUENCES = Number(args.sequences || 50);
const SEED = Number(args.seed || 1);
const WORKERS = Number(args.workers || 4);
const OUT = args.out;
const acceptedFile = path.join(__dirname, 'accepted.json');
const ACCEPTED = JSON.parse(fs.readFileSync(acceptedFile, 'utf8'));
const RULES = [...ACCEPTED.accepted.map((e) => ({ ...e, class: 'accepted' })),
  ...(ACCEPTED.pending || []).map((e) => ({ ...e, class: 'pending' }))];

// ----------------------------------------------------------- HTTP + SigV4 --
const agents = {};
const hmac = (key, data) => crypto.createHmac('sha256', key).update(data).digest();
// The headers of a request signed as the AWS SDKs sign it.
function signedHeaders(host, action, body) {
  const amzDate = new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+/, '');
  const day = amzDate.slice(0, 8);
  const scope = `${day}/us-east-1/dynamodb/aws4_request`;
  const headers = { 'content-type': 'application/x-amz-json-1.0', host, 'x-amz-date': amzDate, 'x-amz-target': action };
  const names = Object.keys(headers).sort().join(';');
  const canonical = `POST\n/\n\n${Object.keys(headers).sort().map((h) => `${h}:${headers[h]}\n`).join('')}\n${names}\n`
    + crypto.createHash('sha256').update(body).digest('hex');
  const toSign = `AWS4-HMAC-SHA256\n${amzDate}\n${scope}\n${crypto.createHash('sha256').update(canonical).digest('hex')}`;
  let key = hmac(`AWS4${args.secret}`, day);
  for (const part of ['us-east-1', 'dynamodb', 'aws4_request']) key = hmac(key, part);
  return {
    'Content-Type': headers['content-type'], 'X-Amz-Date': amzDate, 'X-Amz-Target': action,
    Authorization: `AWS4-HMAC-SHA256 Credential=${args.key}/${scope}, SignedHeaders=${names}, `
      + `Signature=${crypto.createHmac('sha256', key).update(toSign).digest('hex')}`,
    'Content-Length': body.length,
  };
}
let httpRequests = 0;
// POSTs one DynamoDB request; resolves to { status, body } (body parsed, or its text).
function send(url, op, text) {
  httpRequests++;
  const target = new URL(url);
  agents[url] = agents[url] || new http.Agent({ keepAlive: true, maxSockets: WORKERS * 2 });
  const body = Buffer.from(text);
  return new Promise((resolve) => {
    const req = http.request(url, { method: 'POST', agent: agents[url],
      headers: signedHeaders(target.host, `DynamoDB_20120810.${op}`, body) }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        let parsed;
        try { parsed = JSON.parse(raw); } catch (e) { parsed = { __type: 'unparseable', message: raw.slice(0, 300) }; }
        resolve({ status: res.statusCode, text: raw, body: parsed });
      });
    });
    req.setTimeout(60000, () => req.destroy(new Error('timeout')));
    req.on('error', (e) => resolve({ status: 0, body: { __type: 'no answer', message: e.message } }));
    req.end(body);
  });
}

// --------------------------------------------------------------- running --
let execution = 0;
// Fresh table names for one execution of a sequence: $T0, $T1, $TC (bad CreateTable), $TX (never made).
function tableNames() {
  execution++;
  return { $T0: `dq${execution}t0q`, $T1: `dq${execution}t1q`, $TC: `dq${execution}tcq`, $TX: `dq${execution}txq` };
}
const substitute = (req, names) => JSON.parse(JSON.stringify(req).replace(/\$T[01CX]/g, (m) => names[m]));
const unsubstitute = (text, names) => Object.entries(names).reduce((t, [ph, name]) => t.split(name).join(ph), text);

// The index or table sort key a Query's results are ordered by.
function orderKey(seq, step) {
  const t = seq.tables.find((d) => d.TableName === step.req.TableName);
  if (!t || !step.req.IndexName) return null;
  const ix = [...(t.LocalSecondaryIndexes || []), ...(t.GlobalSecondaryIndexes || [])].find((i) => i.IndexName === step.req.IndexName);
  return ix && ix.KeySchema[1] ? ix.KeySchema[1].AttributeName : null;
}

// One step on one target: its normalised result (pages followed, segments joined).
async function runOn(url, seq, step, names) {
  const req = substitute(step.req, names);
  const one = async (r) => {
    const res = await send(url, step.op, JSON.stringify(r));
    const body = typeof res.body === 'object' ? JSON.parse(unsubstitute(JSON.stringify(res.body), names)) : res.body;
    return { raw: body, norm: normalise(step.op, { status: res.status, body }) };
  };
  // (an index Query is compared as a multiset even on one page: order among equal index keys is not defined)
  if (!step.page && !(step.op === 'Query' && step.req.IndexName)) {
    const r = await one(req);
    return { result: r.norm, raw: [r.raw] };
  }
  const pages = [];
  const raws = [];
  for (let s = 0; s < (step.segments || 1); s++) {
    const base = step.segments ? { ...req, Segment: s, TotalSegments: step.segments } : req;
    let start;
    for (let n = 0; n < 60; n++) {
      const r = await one(start ? { ...base, ExclusiveStartKey: start } : base);
      pages.push(r.norm);
      raws.push(r.raw);
      if (r.norm.status !== 200 || !r.raw.LastEvaluatedKey) break;
      start = substitute(r.raw.LastEvaluatedKey, names);
    }
  }
  return { result: combinePages(step, pages, orderKey(seq, step)), raw: raws };
}

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems', 'CreateTable']);
const signature = (step, diff) => `${step.op} ${diff.kind} ${diff.gateway.type || diff.gateway.status}`
  + ` / ${diff.local.type || diff.local.status}`;

// Runs a sequence on both targets.  Resolves to { requests, accepted: [...],
// diverged, diff: { index, step, diff, signature, transcript } | null }.
async function runSequence(seq, keepTranscript = false) {
  const names = tableNames();
  const out = { requests: 0, accepted: [], diverged: false, diff: null };
  const transcript = [];
  const steps = [...seq.tables.map((t) => ({ op: 'CreateTable', req: t, setup: true })), ...seq.steps,
    ...seq.tables.map((t) => ({ op: 'DeleteTable', req: { TableName: t.TableName }, setup: true }))];
  try {
    for (let i = 0; i < steps.length; i++) {
      const step = steps[i];
      const [g, l] = await Promise.all([runOn(args.gateway, seq, step, names), runOn(args.local, seq, step, names)]);
      out.requests++;
      if (keepTranscript) transcript.push({ op: step.op, req: step.req, gateway: g.raw, local: l.raw });
      if (out.diverged) continue; // (the tables are still deleted)
      const diff = difference(g.result, l.result);
      if (!diff) continue;
      const rule = matchAccepted(RULES, step.op, step.req, diff, { faults: faultsOf(step, seq.tables), step, tables: seq.tables });
      if (rule) {
        out.accepted.push(`${rule.class}: ${rule.id || rule.rule}`);
        if (WRITES.has(step.op) && g.result.status !== l.result.status) out.diverged = true;
        continue;
      }
      out.diff = { index: i, step, diff, signature: signature(step, diff) };
      out.diverged = true;
      if (!keepTranscript) break;
    }
  } finally {
    // tables the sequence made, whatever happened
    await Promise.all(['$T0', '$T1', '$TC'].flatMap((t) => [args.gateway, args.local].map((u) => send(u, 'DeleteTable',
      JSON.stringify({ TableName: names[t] })))));
  }
  if (keepTranscript) out.transcript = transcript;
  return out;
}

// ------------------------------------------------------------- shrinking --
const clone = (x) => JSON.parse(JSON.stringify(x));
// The key attributes a table definition uses, and its AttributeDefinitions cut to them.
function trimDefinitions(t) {
  const used = new Set([t, ...(t.LocalSecondaryIndexes || []), ...(t.GlobalSecondaryIndexes || [])]
    .flatMap((x) => x.KeySchema.map((k) => k.AttributeName)));
  t.AttributeDefinitions = t.AttributeDefinitions.filter((a) => used.has(a.AttributeName));
  for (const f of ['LocalSecondaryIndexes', 'GlobalSecondaryIndexes']) if (t[f] && !t[f].length) delete t[f];
}
// Shrinks a failing sequence while its first unaccepted difference keeps its signature.
async function shrink(seq, sig) {
  let best = clone(seq);
  let trials = 0;
  const fails = async (cand) => {
    trials++;
    const r = await runSequence(cand);
    return r.diff && r.diff.signature === sig ? r : null;
  };
  const first = await fails(best);
  if (!first) return { seq: best, trials, flaky: true };
  best.steps = best.steps.slice(0, first.diff.index - best.tables.length + 1);
  // drop steps: chunks, then one at a time
  for (let size = Math.max(1, best.steps.length >> 1); size >= 1; size >>= 1) {
    for (let i = best.steps.length - size; i >= 0; i -= size) {
      const cand = clone(best);
      cand.steps.splice(i, size);
      if (await fails(cand)) best = cand;
    }
  }
  // drop the second table, with its steps
  if (best.tables.length > 1) {
    const cand = clone(best);
    cand.tables = cand.tables.slice(0, 1);
    cand.steps = cand.steps.filter((s) => !JSON.stringify(s.req).includes('$T1'));
    if (cand.steps.length && await fails(cand)) best = cand;
  }
  // drop indexes, and the attribute definitions they alone used
  for (let t = 0; t < best.tables.length; t++) {
    for (const f of ['LocalSecondaryIndexes', 'GlobalSecondaryIndexes']) {
      for (let i = (best.tables[t][f] || []).length - 1; i >= 0; i--) {
        const cand = clone(best);
        cand.tables[t][f].splice(i, 1);
        trimDefinitions(cand.tables[t]);
        if (await fails(cand)) best = cand;
      }
    }
    if (best.tables[t].BillingMode === 'PROVISIONED') {
      const cand = clone(best);
      cand.tables[t].BillingMode = 'PAY_PER_REQUEST';
      delete cand.tables[t].ProvisionedThroughput;
      for (const g of cand.tables[t].GlobalSecondaryIndexes || []) delete g.ProvisionedThroughput;
      if (await fails(cand)) best = cand;
    }
  }
  // drop non-key attributes of written items, and optional request members
  const keyAttrs = new Set(best.tables.flatMap((t) => t.AttributeDefinitions.map((a) => a.AttributeName)));
  const itemsOf = (req) => [req.Item, ...(req.TransactItems || []).map((x) => x.Put && x.Put.Item),
    ...Object.values(req.RequestItems || {}).flatMap((l) => (Array.isArray(l) ? l.map((w) => w.PutRequest && w.PutRequest.Item) : []))]
    .filter(Boolean);
  for (let s = 0; s < best.steps.length; s++) {
    const count = itemsOf(best.steps[s].req).length;
    for (let n = 0; n < count; n++) {
      for (const attr of Object.keys(itemsOf(best.steps[s].req)[n] || {})) {
        if (keyAttrs.has(attr)) continue;
        const cand = clone(best);
        delete itemsOf(cand.steps[s].req)[n][attr];
        if (await fails(cand)) best = cand;
      }
    }
    for (const f of ['ReturnValues', 'ReturnValuesOnConditionCheckFailure', 'ConsistentRead', 'ScanIndexForward', 'Select', 'Limit']) {
      if (!(f in best.steps[s].req)) continue;
      const cand = clone(best);
      delete cand.steps[s].req[f];
      if (f === 'Limit') delete cand.steps[s].page;
      if (await fails(cand)) best = cand;
    }
  }
  return { seq: best, trials };
}

// ------------------------------------------------------------------ main --
const short = (x) => { const s = JSON.stringify(x); return s.length > 700 ? `${s.slice(0, 700)}…` : s; };
async function report(seq, sig, n) {
  const shrunk = args.noShrink ? { seq, trials: 0 } : await shrink(seq, sig);
  const run = await runSequence(shrunk.seq, true);
  const file = path.join(OUT, `repro-${n}.json`);
  fs.writeFileSync(file, JSON.stringify({ signature: sig, seed: seq.seed, shrinkTrials: shrunk.trials,
    flaky: !!shrunk.flaky, sequence: shrunk.seq, difference: run.diff && run.diff.diff, transcript: run.transcript }, null, 1));
  const lines = [`--- ${sig}  (sequence seed ${seq.seed}; ${file}; ${shrunk.seq.steps.length} steps after ${shrunk.trials} trials)`];
  for (const t of shrunk.seq.tables) lines.push(`    CreateTable ${short(t)}`);
  shrunk.seq.steps.forEach((s) => lines.push(`    ${s.op} ${short(s.req)}${s.page ? ' (all pages)' : ''}${s.segments ? ` (${s.segments} segments)` : ''}`));
  if (run.diff) {
    lines.push(`    gateway: ${short(run.diff.diff.gateway)}`);
    lines.push(`    local:   ${short(run.diff.diff.local)}`);
  } else lines.push('    (the difference did not recur on the final run)');
  console.log(lines.join('\n'));
}

async function main() {
  const started = Date.now();
  if (args.reclassify) {
    // a run's unexplained differences (differences.jsonl) against the accepted list as it is now
    const counts = {};
    for (const line of fs.readFileSync(args.reclassify, 'utf8').split('\n').filter(Boolean)) {
      const d = JSON.parse(line);
      const op = d.signature.split(' ')[0];
      const diff = difference(d.gateway, d.local);
      const seq = generator(d.seed);
      const step = seq.steps.find((st) => stable(st.req) === stable(d.req)) || { op, req: d.req };
      const rule = diff && matchAccepted(RULES, op, d.req, diff, { faults: faultsOf(step, seq.tables), step, tables: seq.tables });
      const key = !diff ? 'equal once normalised' : rule ? `${rule.class}: ${rule.id || rule.rule}` : `UNEXPLAINED ${d.signature}`;
      counts[key] = (counts[key] || 0) + 1;
    }
    for (const [k, v] of Object.entries(counts).sort((a, b) => b[1] - a[1])) console.log(`${v}\t${k}`);
    return;
  }
  fs.mkdirSync(OUT, { recursive: true });
  fs.rmSync(path.join(OUT, 'differences.jsonl'), { force: true });
  if (args.replay) {
    const data = JSON.parse(fs.readFileSync(args.replay, 'utf8'));
    const seq = data.sequence || data;
    const run = await runSequence(seq, true);
    for (const t of run.transcript) console.log(`${t.op} ${short(t.req)}\n  gateway: ${short(t.gateway)}\n  local:   ${short(t.local)}`);
    console.log(run.diff ? `DIFFERENCE at step ${run.diff.index}: ${run.diff.signature}\n  gateway: ${short(run.diff.diff.gateway)}\n  local:   ${short(run.diff.diff.local)}`
      : 'no unexplained difference');
    for (const a of run.accepted) console.log(`  (${a})`);
    process.exit(run.diff ? 1 : 0);
  }
  const counts = { sequences: 0, steps: 0, diverged: 0, failed: 0 };
  const acceptedCounts = {};
  const signatures = new Map(); // signature -> { count, seq }
  let next = 0;
  let lastProgress = Date.now();
  const worker = async () => {
    while (next < SEQUENCES) {
      const i = next++;
      const seq = generator(sequenceSeed(SEED, i));
      const r = await runSequence(seq);
      counts.sequences++;
      counts.steps += r.requests;
      for (const a of r.accepted) acceptedCounts[a] = (acceptedCounts[a] || 0) + 1;
      if (r.diff) {
        counts.failed++;
        fs.appendFileSync(path.join(OUT, 'differences.jsonl'), `${JSON.stringify({ signature: r.diff.signature, sequence: i,
          seed: seq.seed, req: r.diff.step.req, gateway: r.diff.diff.gateway, local: r.diff.diff.local })}\n`);
        const s = signatures.get(r.diff.signature) || { count: 0, seq, index: i };
        s.count++;
        signatures.set(r.diff.signature, s);
      } else if (r.diverged) counts.diverged++;
      if (Date.now() - lastProgress > 30000) {
        lastProgress = Date.now();
        const min = (Date.now() - started) / 60000;
        console.log(`.. ${counts.sequences} sequences, ${counts.steps} steps, ${counts.failed} with a difference, `
          + `${(counts.sequences / min).toFixed(0)}/min`);
      }
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, worker));
  const seconds = (Date.now() - started) / 1000;
  const summary = [
    '', `== summary (seed ${SEED}, ${WORKERS} workers)`,
    `sequences ${counts.sequences}`, `steps ${counts.steps} (HTTP requests ${httpRequests}, both targets)`,
    `time ${seconds.toFixed(0)} s (${(counts.sequences / (seconds / 60)).toFixed(1)} sequences/min)`,
    `sequences with an unexplained difference ${counts.failed}`, `sequences cut short by an accepted divergence ${counts.diverged}`,
    ...Object.entries(acceptedCounts).sort().map(([k, v]) => `  ${k}: ${v}`),
    ...[...signatures].sort((a, b) => b[1].count - a[1].count).map(([sig, s]) => `  UNEXPLAINED ${sig}: ${s.count} sequence(s)`),
  ];
  console.log(summary.join('\n'));
  fs.writeFileSync(path.join(OUT, 'summary.txt'), `${summary.join('\n')}\n`);
  // the most frequent kinds first, SHRINK_MAX of them (--shrink-max, default 20)
  const shrinkMax = Number(args['shrink-max'] || 20);
  const kinds = [...signatures].sort((a, b) => b[1].count - a[1].count).slice(0, shrinkMax);
  console.log(`\n== shrinking ${kinds.length} of ${signatures.size} kind(s) of difference`);
  let n = 0;
  for (const [sig, s] of kinds) await report(s.seq, sig, ++n);
  agentsDestroy();
  process.exit(counts.failed ? 1 : 0);
}
const agentsDestroy = () => Object.values(agents).forEach((a) => a.destroy());
main().catch((e) => { console.error(e); process.exit(2); });
