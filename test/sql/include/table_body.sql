-- The table engine's behaviour, run by table_plain.sql (partitions = 0) and
-- table_partitioned.sql (partitions = 4): the same answers either way.
\set SHOW_CONTEXT never
SELECT ddb.create_table('Music', 'Artist', 'S', 'SongTitle', 'S', schema_name => 'music',
                        partitions => :partitions);
SELECT ddb.create_index('Music', 'ByGenre', 'Genre', 'S', 'Year', 'N');
SELECT ddb.create_index('Music', 'ByAlbum', 'Album', 'S', projection_type => 'KEYS_ONLY');
-- a GSI may be called expires_at: the TTL index's name cannot meet it
SELECT ddb.create_index('Music', 'expires_at', 'Nothing', 'S');
SELECT ddb.create_index('Music', 'ByLabel', 'Label', 'S', projection_type => 'INCLUDE',
                        non_key_attributes => ARRAY['Price']);
-- (the models' tables, installed with the extension, have a model)
SELECT table_name, schema_name, relation_name, hash_key, range_key, attribute_types, partitions
FROM ddb.tables WHERE model IS NULL;
SELECT index_name, relation_name, hash_key, range_key, projection_type, non_key_attributes
FROM ddb.indexes WHERE table_name IN (SELECT table_name FROM ddb.tables WHERE model IS NULL) ORDER BY index_name;

-- Items: natural JSON in, canonical natural JSON out.
SELECT ddb.put_item('Music', '{"Artist": "Acme", "SongTitle": "Call Me Today", "Genre": "Pop", "Year": 2015,
                              "Album": "Somewhat Famous", "Label": "Up", "Price": 1.50, "Awards": 0}');
SELECT ddb.put_item('Music', '{"Artist": "Acme", "SongTitle": "Happy Day", "Genre": "Pop", "Year": 2019,
                              "Album": "Songs About Life", "Tags": {"$SS": ["b", "a"]}, "Cover": {"$B": "AAEC"},
                              "Credits": {"writers": ["Ann", "Bo"], "$B": "not binary, a map key"}}');
SELECT ddb.put_item('Music', '{"Artist": "Acme", "SongTitle": "PartiQL Rocks", "Genre": "Rock", "Year": 2021}');
SELECT ddb.put_item('Music', '{"Artist": "No One You Know", "SongTitle": "My Dog Spot", "Year": 2002}');
SELECT ddb.get_item('Music', 'Acme', 'Call Me Today');
SELECT ddb.get_item('Music', 'Acme', 'Happy Day');
SELECT ddb.get_item('Music', 'Acme', 'Missing') IS NULL AS missing_is_null;

-- Query in sort key order, both directions, every sort key condition.
SELECT i->>'SongTitle' AS song FROM ddb.query('Music', 'Acme') i;
SELECT i->>'SongTitle' AS song FROM ddb.query('Music', 'Acme', ascending => false) i;
SELECT i->>'SongTitle' AS song FROM ddb.query('Music', 'Acme', 'begins_with', 'Ha') i;
SELECT i->>'SongTitle' AS song FROM ddb.query('Music', 'Acme', '>', 'Call Me Today') i;
SELECT i->>'SongTitle' AS song FROM ddb.query('Music', 'Acme', 'between', 'B', 'I') i;
SELECT i->>'SongTitle' AS song FROM ddb.query('Music', 'Acme', '<=', 'Happy Day', max_items => 1) i;
SELECT count(*) FROM ddb.query('Music', 'Nobody');

-- GSIs: sparse, typed, projected.
SELECT i->>'SongTitle' AS song, i->'Year' AS year FROM ddb.query('Music', 'Pop', index_name => 'ByGenre') i;
SELECT i->>'SongTitle' AS song FROM ddb.query('Music', 'Pop', '>=', '\d2016', index_name => 'ByGenre') i;
SELECT i AS keys_only FROM ddb.query('Music', 'Somewhat Famous', index_name => 'ByAlbum') i;
SELECT i AS included FROM ddb.query('Music', 'Up', index_name => 'ByLabel') i;
SELECT count(*) AS genreless_song_not_indexed FROM music."Music:ByGenre" WHERE pk = 'No One You Know';
SELECT ddb.put_item('Music', '{"Artist": "Acme", "SongTitle": "Bad Year", "Genre": "Pop", "Year": "2020"}');
SELECT count(*) AS bad_year_not_written FROM ddb.query('Music', 'Acme', '=', 'Bad Year');
-- Changing a GSI key moves the entry; dropping it removes the entry.
SELECT ddb.put_item('Music', '{"Artist": "Acme", "SongTitle": "PartiQL Rocks", "Genre": "Pop", "Year": 2021}');
SELECT count(*) AS rock_songs FROM ddb.query('Music', 'Rock', index_name => 'ByGenre');
SELECT count(*) AS pop_songs FROM ddb.query('Music', 'Pop', index_name => 'ByGenre');
SELECT ddb.put_item('Music', '{"Artist": "Acme", "SongTitle": "PartiQL Rocks", "Year": 2021}');
SELECT count(*) AS pop_songs_after_drop FROM ddb.query('Music', 'Pop', index_name => 'ByGenre');
SELECT ddb.delete_item('Music', 'Acme', 'PartiQL Rocks');
SELECT ddb.delete_item('Music', 'Acme', 'PartiQL Rocks') IS NULL AS second_delete_finds_nothing;
SELECT * FROM ddb.verify_gsi('Music');

-- Scan: every item, in key order.
SELECT i->>'Artist' AS artist, i->>'SongTitle' AS song FROM ddb.scan('Music') i;
SELECT count(*) AS indexed_by_genre FROM ddb.scan('Music', 'ByGenre');

-- Plain SQL reads the same rows, indexed.
SELECT pk, sk, item_size FROM music."Music" WHERE pk = 'Acme' AND sk ^@ 'Ha';

-- Validation: keys, types, sizes, values.
SELECT ddb.put_item('Music', '{"Artist": "Acme"}');
SELECT ddb.put_item('Music', '{"Artist": "", "SongTitle": "x"}');
SELECT ddb.put_item('Music', '{"Artist": 5, "SongTitle": "x"}');
SELECT ddb.put_item('Music', jsonb_build_object('Artist', 'Acme', 'SongTitle', repeat('x', 1025)));
SELECT ddb.put_item('Music', jsonb_build_object('Artist', repeat('x', 2049), 'SongTitle', 'x'));
SELECT ddb.put_item('Music', jsonb_build_object('Artist', 'Acme', 'SongTitle', 'big', 'blob', repeat('x', 409600)));
SELECT ddb.put_item('Music', '{"Artist": "Acme", "SongTitle": "x", "n": 1e126}');
SELECT ddb.put_item('Music', '{"Artist": "Acme", "SongTitle": "x", "s": {"$SS": []}}');
SELECT ddb.put_item('Music', '{"Artist": "Acme", "SongTitle": "x", "s": {"$NS": [1, 1.0]}}');
SELECT ddb.put_item('Music', '{"Artist": "Acme", "SongTitle": "x", "b": {"$B": "***"}}');
SELECT ddb.put_item('Music', '[1, 2]');
SELECT ddb.get_item('Music', 'Acme');
SELECT ddb.get_item('Music', '\d1', 'x');
SELECT ddb.get_item('Nope', 'Acme', 'x');
SELECT * FROM ddb.query('Music', 'Acme', index_name => 'Nope');
SELECT * FROM ddb.query('Music', 'Acme', 'like', 'x');
SELECT * FROM ddb.query('Music', 42);
SELECT * FROM ddb.query('Music', 'Acme', sk => 'x');
SELECT ddb.item_expiry('Music', NULL) IS NULL AS strict_expiry;
SELECT ddb.item_expiry('Music', '[1, 2]');
SELECT * FROM ddb.index_entry('Music', 'ByAlbum', '{"Artist": "a", "SongTitle": "s", "Album": {"$B": 5}}');
SELECT * FROM ddb.query('Music', 'Acme', '>', 42);
SELECT count(*) AS items_after_failed_writes FROM ddb.scan('Music');

-- TTL: expired items vanish from every read at once, the sweep deletes them
-- with their GSI entries, and TTLs more than five years old are ignored.
SELECT ddb.update_time_to_live('Music', 'ttl');
SELECT ddb.put_item('Music', jsonb_build_object('Artist', 'Temp', 'SongTitle', 'expired', 'Genre', 'Pop', 'Year', 1,
                    'ttl', extract(epoch FROM now())::bigint - 60));
SELECT ddb.put_item('Music', jsonb_build_object('Artist', 'Temp', 'SongTitle', 'live', 'Genre', 'Pop', 'Year', 2,
                    'ttl', extract(epoch FROM now())::bigint + 3600));
SELECT ddb.put_item('Music', jsonb_build_object('Artist', 'Temp', 'SongTitle', 'ancient', 'Genre', 'Pop', 'Year', 3,
                    'ttl', extract(epoch FROM now())::bigint - 6 * 365 * 86400));
SELECT ddb.put_item('Music', '{"Artist": "Temp", "SongTitle": "text ttl", "ttl": "soon"}');
SELECT i->>'SongTitle' AS visible FROM ddb.query('Music', 'Temp') i;
SELECT ddb.get_item('Music', 'Temp', 'expired') IS NULL AS expired_get_is_null;
SELECT count(*) AS expired_in_gsi_query FROM ddb.query('Music', 'Pop', '<', '\d2', index_name => 'ByGenre');
SELECT ddb.expire('Music', 100) AS swept;
SELECT count(*) AS rows_left_for_temp FROM music."Music" WHERE pk = 'Temp';
SELECT count(*) AS gsi_rows_for_temp FROM music."Music:ByGenre" WHERE pk = 'Temp';
SELECT ddb.expire('Music', 100) AS nothing_left;
SELECT ddb.update_time_to_live('Music', 'ttl');
SELECT ddb.update_time_to_live('Music', 'ttl', false);
SELECT count(*) AS expiries_cleared FROM music."Music" WHERE expires_at IS NOT NULL;
SELECT * FROM ddb.verify_gsi('Music');

-- verify_gsi reports damage done behind the trigger's back.
DELETE FROM music."Music:ByGenre" WHERE sk = 'Call Me Today';
UPDATE music."Music:ByAlbum" SET item = '{}';
SELECT * FROM ddb.verify_gsi('Music') ORDER BY 1, 2;

-- TRUNCATE empties the indexes with the table (no stale entry blocks the
-- same items coming back).
TRUNCATE music."Music";
SELECT (SELECT count(*) FROM music."Music:ByGenre") + (SELECT count(*) FROM music."Music:ByAlbum")
       + (SELECT count(*) FROM music."Music:ByLabel") AS index_entries_left;
SELECT ddb.put_item('Music', '{"Artist": "Acme", "SongTitle": "Call Me Today", "Genre": "Pop", "Year": 2015,
                              "Album": "Somewhat Famous", "Label": "Up", "Price": 1.50, "Awards": 0}');
SELECT i->>'SongTitle' AS song FROM ddb.query('Music', 'Pop', index_name => 'ByGenre') i;
SELECT * FROM ddb.verify_gsi('Music');

-- The catalog refuses duplicates and unknown names.
SELECT ddb.create_table('Music', 'Artist');
SELECT ddb.create_table('x', 'Artist');
SELECT ddb.create_index('Music', 'ByGenre', 'Genre');
SELECT ddb.create_index('Music', 'ByYear', 'Year', 'S');
SELECT ddb.create_index('Nope', 'ByYear', 'Year');

-- A table may be called like another's primary key index.
SELECT ddb.create_table('Music_pkey', 'id', schema_name => 'music');
SELECT ddb.delete_table('Music_pkey');

-- A hash-key-only table.
SELECT ddb.create_table('Sessions', 'id', 'N', schema_name => 'music', partitions => :partitions);
SELECT ddb.put_item('Sessions', '{"id": 42, "user": "ann"}');
SELECT ddb.get_item('Sessions', '\d42.0');
SELECT ddb.get_item('Sessions', 42);
SELECT ddb.get_item('Sessions', '\d42', 'x');
SELECT count(*) FROM ddb.query('Sessions', 42);
SELECT ddb.delete_table('Sessions');
SELECT ddb.delete_table('Music');
SELECT count(*) AS tables_left FROM ddb.tables WHERE model IS NULL;
DROP SCHEMA music;
