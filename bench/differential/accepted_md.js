// bench/differential/accepted_md.js — prints accepted.json as the markdown of
// docs/conformance.md's "Accepted differences from DynamoDB Local", so that
// the two stay in sync:  node bench/differential/accepted_md.js
'use strict';
const { accepted, pending } = require('./accepted.json');
const side = (name, m) => (m ? `${name} ${Object.entries(m).map(([k, v]) => `${k} \`${v}\``).join(', ')}` : null);
const lines = [];
for (const e of accepted) {
  const match = [e.op && `op \`${e.op}\``, e.kind && `kind ${e.kind}`, e.request && `request \`${e.request}\``,
    side('ddb-gateway', e.gateway), side('DynamoDB Local', e.local), e.predicate && `predicate ${e.predicate}`].filter(Boolean).join('; ');
  lines.push(`- **${e.id}** (${match}). ${e.reason} Source: ${e.source}.`);
}
if ((pending || []).length) {
  lines.push('', 'Pending (temporary: rules other engineers are changing now; each goes when its rule lands):', '');
  const rules = new Map();
  for (const e of pending) rules.set(e.rule, (rules.get(e.rule) || 0) + 1);
  for (const [rule, n] of rules) lines.push(`- ${rule} (${n} matcher${n > 1 ? 's' : ''})`);
}
console.log(lines.join('\n'));
