// bench/differential/compare.js — what the differential tester compares:
// a response of ddb-gateway and one of DynamoDB Local, each normalised
// (request ids, timestamps, ARNs, capacity, counts and sizes dropped; sets
// and unordered results sorted; numbers canonical), then compared by status,
// error type, message and body; a difference is matched against
// accepted.json.
'use strict';

// A DynamoDB number in its canonical text: no leading or trailing zeros, no exponent when short.
function canonicalNumber(text) {
  const m = /^\s*([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\s*$/.exec(String(text));
  if (!m || (m[2] === '' && (m[3] || '') === '')) return String(text);
  let digits = (m[2] + (m[3] || '')).replace(/^0+/, '');
  let exp = Number(m[4] || 0) - (m[3] || '').length;
  if (digits === '') return '0';
  const trailing = digits.length - digits.replace(/0+$/, '').length;
  digits = digits.slice(0, digits.length - trailing);
  exp += trailing;
  const sign = m[1] === '-' ? '-' : '';
  if (exp >= 0) return exp < 40 ? sign + digits + '0'.repeat(exp) : `${sign}${digits}e${exp}`;
  const point = digits.length + exp;
  if (point > 0) return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
  return point > -40 ? `${sign}0.${'0'.repeat(-point)}${digits}` : `${sign}${digits}e${exp}`;
}

// An AttributeValue with numbers canonical and set members sorted.
function normValue(v) {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return v;
  const out = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === 'N') out.N = canonicalNumber(x);
    else if (k === 'NS' && Array.isArray(x)) out.NS = x.map(canonicalNumber).sort();
    else if ((k === 'SS' || k === 'BS') && Array.isArray(x)) out[k] = x.slice().sort();
    else if (k === 'L' && Array.isArray(x)) out.L = x.map(normValue);
    else if (k === 'M' && x && typeof x === 'object') out.M = normItem(x);
    else out[k] = x;
  }
  return out;
}
// An item (a map of names to AttributeValues), its names sorted.
function normItem(item) {
  if (!item || typeof item !== 'object') return item;
  const out = {};
  for (const k of Object.keys(item).sort()) out[k] = normValue(item[k]);
  return out;
}
const stable = (x) => JSON.stringify(x, (k, v) => (v && typeof v === 'object' && !Array.isArray(v)
  ? Object.fromEntries(Object.keys(v).sort().map((key) => [key, v[key]])) : v));
const sortItems = (items) => items.map(normItem).sort((a, b) => (stable(a) < stable(b) ? -1 : stable(a) > stable(b) ? 1 : 0));

// A table description reduced to what both can be expected to agree on.
function normTable(d) {
  if (!d || typeof d !== 'object') return d;
  const ks = (list) => list && list.map((k) => ({ AttributeName: k.AttributeName, KeyType: k.KeyType }));
  const proj = (p) => p && { ProjectionType: p.ProjectionType, NonKeyAttributes: p.NonKeyAttributes && p.NonKeyAttributes.slice().sort() };
  const index = (ix) => ({ IndexName: ix.IndexName, KeySchema: ks(ix.KeySchema), Projection: proj(ix.Projection) });
  const byName = (a, b) => (a.IndexName < b.IndexName ? -1 : 1);
  return {
    TableName: d.TableName,
    KeySchema: ks(d.KeySchema),
    AttributeDefinitions: d.AttributeDefinitions && d.AttributeDefinitions.slice()
      .sort((a, b) => (a.AttributeName < b.AttributeName ? -1 : 1)),
    LocalSecondaryIndexes: d.LocalSecondaryIndexes && d.LocalSecondaryIndexes.map(index).sort(byName),
    GlobalSecondaryIndexes: d.GlobalSecondaryIndexes && d.GlobalSecondaryIndexes.map(index).sort(byName),
  };
}

// The type of an error without its namespace.
const errorType = (body) => (body && typeof body.__type === 'string' ? body.__type.replace(/^.*#/, '') : undefined);
const errorMessage = (body) => body && (body.message !== undefined ? body.message : body.Message);

// One response (status, parsed body) normalised for comparison; op is the action.
function normalise(op, res, ctx = {}) {
  const { status, body } = res;
  if (status !== 200) {
    const out = { status, type: errorType(body), message: errorMessage(body) };
    if (body && body.CancellationReasons) {
      out.reasons = body.CancellationReasons.map((r) => ({ Code: r.Code, Item: r.Item && normItem(r.Item) }));
    }
    if (body && body.Item) out.item = normItem(body.Item);
    return out;
  }
  const b = body || {};
  let out;
  switch (op) {
    case 'CreateTable': case 'DescribeTable': case 'DeleteTable':
      out = normTable(b.TableDescription || b.Table);
      break;
    case 'GetItem': case 'PutItem': case 'DeleteItem': case 'UpdateItem':
      out = { Item: b.Item && normItem(b.Item), Attributes: b.Attributes && normItem(b.Attributes),
        ItemCollectionKey: b.ItemCollectionMetrics && normItem(b.ItemCollectionMetrics.ItemCollectionKey) };
      break;
    case 'Query': case 'Scan':
      out = { Items: b.Items && b.Items.map(normItem), Count: b.Count, ScannedCount: b.ScannedCount,
        LastEvaluatedKey: b.LastEvaluatedKey && normItem(b.LastEvaluatedKey) };
      break;
    case 'BatchGetItem':
      out = { Responses: Object.fromEntries(Object.entries(b.Responses || {}).map(([t, items]) => [t, sortItems(items)])),
        UnprocessedKeys: b.UnprocessedKeys || {} };
      break;
    case 'BatchWriteItem':
      out = { UnprocessedItems: b.UnprocessedItems || {} };
      break;
    case 'TransactGetItems':
      out = { Responses: (b.Responses || []).map((r) => ({ Item: r.Item && normItem(r.Item) })) };
      break;
    default:
      out = {};
  }
  return { status, body: JSON.parse(JSON.stringify(out)) };
}

// The pages of a paginated Query or Scan, or the segments of a Scan, as one result.
// Base-table Queries compare page by page; index Queries as the sequence of
// index sort keys plus the multiset of items (order among equal index keys is
// not defined); Scans as a multiset.
function combinePages(step, pages, rangeAttr) {
  const bad = pages.find((p) => p.status !== 200);
  if (bad) return bad;
  if (step.op === 'Query' && !step.req.IndexName) return { status: 200, pages: pages.map((p) => p.body) };
  const items = pages.flatMap((p) => p.body.Items || []);
  const out = { status: 200, Count: pages.reduce((n, p) => n + (p.body.Count || 0), 0),
    ScannedCount: pages.reduce((n, p) => n + (p.body.ScannedCount || 0), 0), Items: sortItems(items) };
  if (step.op === 'Query' && rangeAttr) out.order = items.map((i) => i[rangeAttr] && stable(normValue(i[rangeAttr])));
  return out;
}

// A message with its operands' renderings made comparable: numbers canonical,
// binary values elided (DynamoDB Local prints a Java ByteBuffer), the keys
// of an unused-placeholder message and the attributes an index does not
// project sorted (sets: DynamoDB Local lists them in a Java HashSet's order).
const normMessage = (m) => (typeof m === 'string' ? m.replace(/\{N:([^}]*)\}/g, (x, n) => `{N:${canonicalNumber(n)}}`)
  .replace(/\{B:[^}]*\}/g, '{B:...}')
  .replace(/keys: \{([^}]*)\}/g, (x, k) => `keys: {${k.split(', ').sort().join(', ')}}`)
  .replace(/(does not project (?:one or more filter attributes: )?)\[([^\]]*)\]/g, (x, p, k) => `${p}[${k.split(', ').sort().join(', ')}]`) : m);

// The difference between two normalised responses, or null: { kind, gateway, local }.
function difference(g, l) {
  if (g.message !== undefined) g = { ...g, message: normMessage(g.message) };
  if (l.message !== undefined) l = { ...l, message: normMessage(l.message) };
  if (g.status !== l.status || g.type !== l.type) return { kind: 'status', gateway: g, local: l };
  if (g.status !== 200) {
    const sg = stable({ ...g, message: undefined });
    const sl = stable({ ...l, message: undefined });
    if (sg !== sl) return { kind: 'body', gateway: g, local: l };
    if (g.message !== l.message) return { kind: 'message', gateway: g, local: l };
    return null;
  }
  return stable(g) === stable(l) ? null : { kind: 'body', gateway: g, local: l };
}

// Named predicates of accepted.json entries over a difference.
const PREDICATES = {
  // base-table Query pages equal once a trailing empty page and the LastEvaluatedKey before it are dropped
  trailingEmptyPage(diff) {
    const trim = (r) => {
      const pages = (r.pages || []).map((p) => ({ ...p }));
      const last = pages[pages.length - 1];
      if (pages.length > 1 && last.Count === 0 && !last.ScannedCount && !last.LastEvaluatedKey && (!last.Items || !last.Items.length)) {
        pages.pop();
        delete pages[pages.length - 1].LastEvaluatedKey;
      }
      if (pages.length) delete pages[pages.length - 1].LastEvaluatedKey;
      return stable(pages);
    };
    return !!(diff.gateway.pages && diff.local.pages) && trim(diff.gateway) === trim(diff.local);
  },
  // UpdateItem's UPDATED_OLD/UPDATED_NEW: ddb_model's Attributes a fragment of DynamoDB Local's (same values, fewer map members or list elements)
  updatedFragment(diff) {
    const within = (a, b) => {
      if (a === null || typeof a !== 'object') return stable(a) === stable(b);
      if (b === null || typeof b !== 'object' || Array.isArray(a) !== Array.isArray(b)) return false;
      if (Array.isArray(a)) {
        // a list's changed elements, in order (SET l[1], REMOVE l[0] return those alone)
        let j = 0;
        for (const x of a) {
          while (j < b.length && !within(x, b[j])) j++;
          if (j++ >= b.length) return false;
        }
        return true;
      }
      return Object.keys(a).every((k) => k in b && within(a[k], b[k]));
    };
    const g = diff.gateway.body && diff.gateway.body.Attributes;
    const l = diff.local.body && diff.local.body.Attributes;
    return !!(g && l) && within(g, l);
  },
  // a request with two or more faults (faults.js), both answers client errors each reporting a different one of them
  severalFaults(diff, ctx) {
    const faults = ctx.faults || [];
    const text = (r) => String(r.message === undefined ? '' : r.message);
    if (faults.length < 2 || diff.gateway.status !== 400 || diff.local.status !== 400) return false;
    return faults.some((fg) => fg.pattern.test(text(diff.gateway))
      && faults.some((fl) => fl !== fg && fl.pattern.test(text(diff.local))));
  },
  // both cancel; DynamoDB Local's list stops short (after its last reason that is not None), or holds
  // an action's ValidationError alone
  reasonsPerAction(diff) {
    const [g, l] = [diff.gateway.reasons || [], diff.local.reasons || []];
    // (DynamoDB Local answers an action's ValidationError as a list of that one reason, wherever the action is)
    if (l.length === 1 && l[0].Code === 'ValidationError') return g.length > 1 && g.some((r) => r.Code === 'ValidationError');
    return l.length > 0 && l.length < g.length && stable(g.slice(0, l.length)) === stable(l)
      && g.slice(l.length).every((r) => r.Code === 'None');
  },
  // a Scan or Query of a global secondary index whose filter names an attribute the index does not project
  filterOnUnprojected(diff, ctx) {
    const req = (ctx.step && ctx.step.req) || {};
    const table = (ctx.tables || []).find((t) => t.TableName === req.TableName);
    const ix = table && (table.GlobalSecondaryIndexes || []).find((i) => i.IndexName === req.IndexName);
    if (!ix || typeof req.FilterExpression !== 'string' || ix.Projection.ProjectionType === 'ALL') return false;
    const projected = new Set([...table.KeySchema, ...ix.KeySchema].map((k) => k.AttributeName)
      .concat(ix.Projection.NonKeyAttributes || []));
    const names = req.ExpressionAttributeNames || {};
    const tops = [...req.FilterExpression.matchAll(/(?<![.:\w#])(#?[A-Za-z_]\w*)(\s*\()?/g)]
      .filter((m) => !m[2] && !/^(AND|OR|NOT|BETWEEN|IN)$/i.test(m[1])).map((m) => names[m[1]] || m[1]);
    return tops.some((a) => !projected.has(a)) && diff.gateway.ScannedCount === diff.local.ScannedCount;
  },
  // ddb_model's "Two document paths overlap" names two paths one of which is a prefix of the other
  overlappingPaths(diff) {
    const m = /path one: \[(.*)\], path two: \[(.*)\]$/.exec(diff.gateway.message || '');
    if (!m) return false;
    const [a, b] = [m[1].split(', '), m[2].split(', ')];
    const n = Math.min(a.length, b.length);
    return a.slice(0, n).join('\u0000') === b.slice(0, n).join('\u0000');
  },
};

// The accepted entry (or pending one) a difference matches, or null; ctx
// carries what predicates may need beyond the difference (the step's faults).
function matchAccepted(list, op, req, diff, ctx = {}) {
  const re = (pattern, text) => pattern === undefined || new RegExp(pattern, 's').test(text === undefined ? '' : String(text));
  const side = (m, r) => !m || (re(m.status, r.status) && re(m.type, r.type) && re(m.message, r.message)
    && re(m.body, stable(r.body || r.pages || r.Items || '')));
  for (const entry of list) {
    if (entry.op && !new RegExp(`^(${entry.op})$`).test(op)) continue;
    if (entry.kind && entry.kind !== diff.kind) continue;
    if (!re(entry.request, JSON.stringify(req))) continue;
    if (!side(entry.gateway, diff.gateway) || !side(entry.local, diff.local)) continue;
    if (entry.predicate && !PREDICATES[entry.predicate](diff, ctx)) continue;
    return entry;
  }
  return null;
}

module.exports = { canonicalNumber, normalise, combinePages, difference, matchAccepted, stable, normItem };
