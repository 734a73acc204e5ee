-- The demo of the uniflow model (docs/models/uniflow.md): example data,
-- then every access pattern U1-U7.
\pset footer off
\set SHOW_CONTEXT never
\echo
\echo '==== uniflow: six tables, a source, a visitor who is identified, events and a segment'
SELECT uniflow.load_example_data() AS user_id;
\echo '== U1 the merged profile (identify merged traits; the later plan won)'
SELECT user_id, traits, created_at, updated_at FROM uniflow.get_profile('user_123');
\echo '== U2 event history in timestamp order'
SELECT at, event, properties FROM uniflow.event_history('user_123');
\echo '== U3 identity resolution: anonymous visitor abc-123'
SELECT uniflow.resolve_identity('abc-123') AS user_id;
\echo '== U4 a new source: its write key is shown once, stored as a sha256 digest; then authentication'
CREATE TEMP TABLE new_source AS SELECT * FROM uniflow.create_source('mobile app', id => 'src_app');
SELECT id, write_key AS "write key (shown once)" FROM new_source;
SELECT id, name, write_key_hash FROM uniflow.authenticate((SELECT write_key FROM new_source));
SELECT uniflow.authenticate('wk_not_a_key') IS NULL AS "a wrong key authenticates nothing";
\echo '== U5 the members of segment seg_456'
SELECT * FROM uniflow.segment_members('seg_456') AS user_id;
\echo '== U6 a segment, a destination and a source by id'
SELECT uniflow.get_by_id('segment', 'seg_456') AS segment, uniflow.get_by_id('destination', 'dst_warehouse') AS destination;
\echo '== U7 RETAIN: the extension cannot be dropped while tables hold items'
\set ON_ERROR_STOP 0
DROP EXTENSION ddb_model CASCADE;
\set ON_ERROR_STOP 1
