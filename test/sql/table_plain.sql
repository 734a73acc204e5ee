-- Tables on plain (unpartitioned) relations.
\set partitions 0
\i test/sql/include/table_body.sql
