-- Nothing lost: thousands of random puts (with GSI keys added, changed,
-- mistyped or dropped), deletes and TTL sweeps, then the GSIs must match
-- the table exactly.
\set SHOW_CONTEXT never
SELECT setseed(0.42);
SELECT ddb.create_table('Rand', 'pk', 'S', 'sk', 'N', partitions => 3);
SELECT ddb.create_index('Rand', 'ByG1', 'g1', 'S', 'g1s', 'N');
SELECT ddb.create_index('Rand', 'ByG2', 'g2', 'N', projection_type => 'INCLUDE', non_key_attributes => ARRAY['v']);
SELECT ddb.create_index('Rand', 'ByG3', 'sk', 'N', 'pk', 'S', projection_type => 'KEYS_ONLY');
SELECT ddb.update_time_to_live('Rand', 'ttl');

CREATE FUNCTION pick(p float8) RETURNS boolean LANGUAGE sql AS 'SELECT random() < p';

DO $$
DECLARE
    item jsonb;
    now_epoch bigint := extract(epoch FROM now())::bigint;
    rejected int := 0;
BEGIN
    FOR i IN 1 .. 4000 LOOP
        IF pick(0.65) THEN
            item := jsonb_build_object('pk', 'P' || floor(random() * 40), 'sk', floor(random() * 15), 'v', i);
            IF pick(0.7) THEN item := item || jsonb_build_object('g1', 'G' || floor(random() * 5)); END IF;
            IF pick(0.7) THEN item := item || jsonb_build_object('g1s', floor(random() * 100)); END IF;
            IF pick(0.5) THEN item := item || jsonb_build_object('g2', floor(random() * 7)); END IF;
            IF pick(0.3) THEN item := item || jsonb_build_object('ttl', now_epoch + (random() * 200 - 100)::int); END IF;
            -- now and then a mistyped GSI key: the write must be refused whole
            IF pick(0.03) THEN item := item || jsonb_build_object('g2', 'not a number'); END IF;
            BEGIN
                PERFORM ddb.put_item('Rand', item);
            EXCEPTION WHEN SQLSTATE 'YD001' THEN
                rejected := rejected + 1;
            END;
        ELSIF pick(0.9) THEN
            PERFORM ddb.delete_item('Rand', ('P' || floor(random() * 40))::text, floor(random() * 15)::int);
        ELSE
            PERFORM ddb.expire('Rand', 25);
        END IF;
    END LOOP;
    RAISE NOTICE 'some writes were refused: %', rejected > 0;
END $$;

SELECT count(*) AS mismatches FROM ddb.verify_gsi('Rand');
SELECT count(*) > 100 AS enough_items FROM public."Rand";
-- Every visible item with G1 keys is found by a G1 query, and nothing else is.
SELECT (SELECT count(*) FROM ddb.scan('Rand') i WHERE i ? 'g1' AND i ? 'g1s')
     = (SELECT count(*) FROM generate_series(0, 4) g, ddb.query('Rand', ('G' || g)::text, index_name => 'ByG1'))
       AS g1_queries_cover_the_table;
-- the sweep's clock is at or after this one, so it removes every row expired by then
SELECT floor(extract(epoch FROM clock_timestamp()))::bigint AS before_sweep \gset
SELECT ddb.expire('Rand', 100000) >= 0 AS swept;
SELECT count(*) AS mismatches_after_sweep FROM ddb.verify_gsi('Rand');
SELECT count(*) AS expired_rows_left FROM public."Rand" WHERE expires_at <= :before_sweep;
SELECT ddb.delete_table('Rand');
DROP FUNCTION pick(float8);
