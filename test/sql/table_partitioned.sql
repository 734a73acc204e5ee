-- Tables hash-partitioned by partition key into 4 PostgreSQL partitions.
SELECT ddb.create_table('Parts', 'pk', partitions => 4);
SELECT ddb.create_index('Parts', 'ByOwner', 'owner');
SELECT c.relname, c.relkind, pg_get_expr(c.relpartbound, c.oid) AS bound
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relname LIKE 'Parts%' AND c.relkind IN ('r', 'p') ORDER BY 1;
SELECT ddb.put_item('Parts', jsonb_build_object('pk', 'item' || i, 'owner', 'o' || (i % 3)))
FROM generate_series(1, 40) i \g /dev/null
SELECT count(DISTINCT tableoid) AS partitions_used FROM public."Parts";
SELECT count(*) AS owner_o1 FROM ddb.query('Parts', 'o1', index_name => 'ByOwner');
SELECT ddb.delete_table('Parts');

\set partitions 4
\i test/sql/include/table_body.sql
