-- Multi-attribute GSI keys (docs/tables.md): up to four attributes in a
-- GSI's partition key and four in its sort key, each typed; an item is in
-- the index when it has them all; Query needs every partition attribute and
-- sort attributes from the left.  Stored as tuple keys (docs/key-type.md).
\set SHOW_CONTEXT never
SELECT ddb.execute('CreateTable', '{"TableName": "Matches", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "matchId", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "matchId", "AttributeType": "S"},
    {"AttributeName": "tournamentId", "AttributeType": "S"}, {"AttributeName": "regionId", "AttributeType": "S"},
    {"AttributeName": "round", "AttributeType": "S"}, {"AttributeName": "score", "AttributeType": "N"}],
  "GlobalSecondaryIndexes": [{"IndexName": "ByTournament",
     "KeySchema": [{"AttributeName": "tournamentId", "KeyType": "HASH"}, {"AttributeName": "regionId", "KeyType": "HASH"},
                   {"AttributeName": "round", "KeyType": "RANGE"}, {"AttributeName": "score", "KeyType": "RANGE"}],
     "Projection": {"ProjectionType": "ALL"}}]}') #> '{TableDescription,GlobalSecondaryIndexes,0,KeySchema}';
SELECT ddb.put_item('Matches', jsonb_build_object('matchId', m, 'tournamentId', t, 'regionId', r, 'round', d, 'score', s))
FROM (VALUES ('m01', 'WINTER', 'NA-EAST', 'SEMIFINALS', 10), ('m02', 'WINTER', 'NA-EAST', 'SEMIFINALS', 9),
             ('m03', 'WINTER', 'NA-EAST', 'QUARTERFINALS', 100), ('m04', 'WINTER', 'NA-EAST', 'FINALS', 7),
             ('m05', 'WINTER', 'EU-WEST', 'SEMIFINALS', 8), ('m06', 'SUMMER', 'NA-EAST', 'SEMIFINALS', 10),
             ('m09', 'WINTER', 'NA-EAST', 'SEMIFINALS', -1.5)) v(m, t, r, d, s);
-- sparse: without round, or without score, an item is not in the index
SELECT ddb.put_item('Matches', '{"matchId": "m07", "tournamentId": "WINTER", "regionId": "NA-EAST", "score": 1}');
SELECT ddb.put_item('Matches', '{"matchId": "m08", "tournamentId": "WINTER", "regionId": "NA-EAST", "round": "SEMIFINALS"}');
-- the matches a Query returns, in order
CREATE FUNCTION pg_temp.matches(condition text, vals jsonb, extra jsonb DEFAULT '{}') RETURNS text
LANGUAGE sql AS $$
SELECT coalesce(string_agg(i->'matchId'->>'S', ' ' ORDER BY n), '(none)')
FROM jsonb_array_elements(ddb.execute('Query', jsonb_build_object('TableName', 'Matches', 'IndexName', 'ByTournament',
       'KeyConditionExpression', condition,
       'ExpressionAttributeValues', '{":t": {"S": "WINTER"}, ":r": {"S": "NA-EAST"}}'::jsonb || vals) || extra)->'Items')
     WITH ORDINALITY AS a(i, n) $$;
-- both partition attributes, then sort attributes from the left: by round, then by score
SELECT pg_temp.matches('tournamentId = :t AND regionId = :r', '{}') AS whole_partition;
SELECT pg_temp.matches('tournamentId = :t AND regionId = :r', '{}', '{"ScanIndexForward": false}') AS backwards;
SELECT pg_temp.matches('regionId = :r AND tournamentId = :t AND round = :d', '{":d": {"S": "SEMIFINALS"}}') AS semifinals;
SELECT pg_temp.matches('tournamentId = :t AND regionId = :r AND round = :d AND score > :s',
                       '{":d": {"S": "SEMIFINALS"}, ":s": {"N": "9"}}') AS above_9;
SELECT pg_temp.matches('tournamentId = :t AND regionId = :r AND round = :d AND score BETWEEN :lo AND :hi',
                       '{":d": {"S": "SEMIFINALS"}, ":lo": {"N": "-2"}, ":hi": {"N": "9"}}') AS between;
SELECT pg_temp.matches('tournamentId = :t AND regionId = :r AND round = :d AND score <= :s',
                       '{":d": {"S": "SEMIFINALS"}, ":s": {"N": "9"}}') AS at_most_9;
SELECT pg_temp.matches('tournamentId = :t AND regionId = :r AND round = :d AND score = :s',
                       '{":d": {"S": "SEMIFINALS"}, ":s": {"N": "9.0"}}') AS exactly_9;
SELECT pg_temp.matches('tournamentId = :t AND regionId = :r AND begins_with(round, :p)', '{":p": {"S": "SEMI"}}') AS semi_prefix;
SELECT pg_temp.matches('tournamentId = :t AND regionId = :r AND round < :d', '{":d": {"S": "SEMIFINALS"}}') AS before_semi;
SELECT pg_temp.matches('tournamentId = :t AND regionId = :r AND round <= :d', '{":d": {"S": "QUARTERFINALS"}}') AS to_quarter;
SELECT pg_temp.matches('tournamentId = :t AND regionId = :r AND round > :d', '{":d": {"S": "FINALS"}}') AS after_finals;
SELECT pg_temp.matches('tournamentId = :t AND regionId = :r AND round >= :d', '{":d": {"S": "QUARTERFINALS"}}') AS from_quarter;
SELECT pg_temp.matches('tournamentId = :t AND regionId = :r AND round BETWEEN :a AND :b',
                       '{":a": {"S": "FINALS"}, ":b": {"S": "QUARTERFINALS"}}') AS finals_to_quarter;
-- a value may come first in a comparison, as DynamoDB reads it
SELECT pg_temp.matches(':t = tournamentId AND :r = regionId AND :d = round AND :s < score',
                       '{":d": {"S": "SEMIFINALS"}, ":s": {"N": "9"}}') AS value_first;
-- what DynamoDB refuses
SELECT ddb.execute('Query', '{"TableName": "Matches", "IndexName": "ByTournament",
  "KeyConditionExpression": "tournamentId = :t", "ExpressionAttributeValues": {":t": {"S": "WINTER"}}}');
SELECT pg_temp.matches('tournamentId = :t AND regionId = :r AND score = :s', '{":s": {"N": "9"}}');
SELECT pg_temp.matches('tournamentId = :t AND regionId = :r AND round > :d AND score = :s',
                       '{":d": {"S": "A"}, ":s": {"N": "9"}}');
SELECT pg_temp.matches('tournamentId = :t AND regionId > :r', '{}');
SELECT pg_temp.matches('tournamentId = :t AND regionId = :r AND round = :d AND begins_with(score, :s)',
                       '{":d": {"S": "SEMIFINALS"}, ":s": {"N": "9"}}');
SELECT pg_temp.matches('tournamentId = :t AND regionId = :r AND round = :d', '{":d": {"N": "1"}}');
SELECT pg_temp.matches('tournamentId = :t AND regionId = :r AND round = :d AND round = :d', '{":d": {"S": "A"}}');
SELECT ddb.execute('Query', '{"TableName": "Matches", "IndexName": "ByTournament",
  "KeyConditionExpression": "tournamentId = :t AND regionId = :r", "FilterExpression": "score > :s",
  "ExpressionAttributeValues": {":t": {"S": "WINTER"}, ":r": {"S": "NA-EAST"}, ":s": {"N": "1"}}}');
-- pages: LastEvaluatedKey names every key attribute, and the next page starts after it
SELECT ddb.execute('Query', '{"TableName": "Matches", "IndexName": "ByTournament", "Limit": 2,
  "KeyConditionExpression": "tournamentId = :t AND regionId = :r",
  "ExpressionAttributeValues": {":t": {"S": "WINTER"}, ":r": {"S": "NA-EAST"}}}') -> 'LastEvaluatedKey';
SELECT pg_temp.matches('tournamentId = :t AND regionId = :r', '{}', '{"ExclusiveStartKey": {"matchId": {"S": "m03"},
  "tournamentId": {"S": "WINTER"}, "regionId": {"S": "NA-EAST"}, "round": {"S": "QUARTERFINALS"}, "score": {"N": "100"}}}')
  AS after_m03;
-- a start key must lie within the key condition
SELECT pg_temp.matches('tournamentId = :t AND regionId = :r AND round = :d', '{":d": {"S": "SEMIFINALS"}}',
  '{"ExclusiveStartKey": {"matchId": {"S": "m03"}, "tournamentId": {"S": "WINTER"}, "regionId": {"S": "NA-EAST"},
                          "round": {"S": "QUARTERFINALS"}, "score": {"N": "100"}}}');
SELECT pg_temp.matches('tournamentId = :t AND regionId = :r', '{}', '{"ExclusiveStartKey": {"matchId": {"S": "m05"},
  "tournamentId": {"S": "WINTER"}, "regionId": {"S": "EU-WEST"}, "round": {"S": "SEMIFINALS"}, "score": {"N": "8"}}}');
SELECT pg_temp.matches('tournamentId = :t AND regionId = :r', '{}', '{"ExclusiveStartKey": {"matchId": {"S": "m03"},
  "tournamentId": {"S": "WINTER"}, "regionId": {"S": "NA-EAST"}, "round": {"S": "QUARTERFINALS"}}}');
-- a key attribute of the wrong type refuses the write, even when the item would not be in the index
SELECT ddb.put_item('Matches', '{"matchId": "m10", "tournamentId": "WINTER", "score": "high"}');
-- Scan reads the index in tuple order; the entries are tuple keys
SELECT string_agg(i->'matchId'->>'S', ' ') FROM jsonb_array_elements(
  ddb.execute('Scan', '{"TableName": "Matches", "IndexName": "ByTournament"}')->'Items') i;
SELECT gpk, gsk, pk FROM public."Matches:ByTournament" WHERE gpk = '\(6:WINTER,7:NA-EAST)' ORDER BY gsk;
SELECT count(*) AS differences FROM ddb.verify_gsi('Matches');
-- updates move an item's entry; removing a key attribute takes it out
SELECT ddb.update_item('Matches', 'm04', NULL, 'SET round = :d', NULL, NULL, '{":d": "SEMIFINALS"}');
SELECT ddb.update_item('Matches', 'm09', NULL, 'REMOVE score');
SELECT pg_temp.matches('tournamentId = :t AND regionId = :r AND round = :d', '{":d": {"S": "SEMIFINALS"}}') AS semifinals_now;
-- UpdateTable adds one to a table with items (N and B attributes, KEYS_ONLY: every key attribute is projected)
SELECT ddb.execute('UpdateTable', '{"TableName": "Matches",
  "AttributeDefinitions": [{"AttributeName": "regionId", "AttributeType": "S"}, {"AttributeName": "score", "AttributeType": "N"},
                           {"AttributeName": "tournamentId", "AttributeType": "S"}],
  "GlobalSecondaryIndexUpdates": [{"Create": {"IndexName": "ByScore",
     "KeySchema": [{"AttributeName": "regionId", "KeyType": "HASH"}, {"AttributeName": "score", "KeyType": "HASH"},
                   {"AttributeName": "tournamentId", "KeyType": "RANGE"}],
     "Projection": {"ProjectionType": "KEYS_ONLY"}}}]}') #> '{TableDescription,GlobalSecondaryIndexes}' @? '$[*] ? (@.IndexName == "ByScore")';
SELECT ddb.execute('Query', '{"TableName": "Matches", "IndexName": "ByScore",
  "KeyConditionExpression": "regionId = :r AND score = :s AND begins_with(tournamentId, :p)",
  "ExpressionAttributeValues": {":r": {"S": "NA-EAST"}, ":s": {"N": "10"}, ":p": {"S": "S"}}}') -> 'Items';
-- PartiQL reads a multi-attribute index by a Scan that filters on its keys
SELECT ddb.execute('ExecuteStatement', '{"Statement": "SELECT matchId FROM \"Matches\".\"ByTournament\" WHERE tournamentId = ? AND regionId = ? AND round = ?",
  "Parameters": [{"S": "WINTER"}, {"S": "EU-WEST"}, {"S": "SEMIFINALS"}]}') -> 'Items';
-- ddb.query (one attribute per key side) points to ddb.execute
SELECT ddb.query('Matches', 'WINTER', index_name => 'ByTournament');
SELECT ddb.execute('UpdateTable', '{"TableName": "Matches",
  "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "ByScore"}}]}') #> '{TableDescription,GlobalSecondaryIndexes}' @? '$[*] ? (@.IndexName == "ByScore")';
-- key schemas DynamoDB refuses
SELECT ddb.execute('CreateTable', '{"TableName": "Bad", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}, {"AttributeName": "b", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}, {"AttributeName": "b", "AttributeType": "S"}]}');
SELECT ddb.execute('CreateTable', '{"TableName": "Bad", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}, {"AttributeName": "a", "AttributeType": "S"},
                           {"AttributeName": "b", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [{"IndexName": "G", "Projection": {"ProjectionType": "ALL"},
     "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}, {"AttributeName": "b", "KeyType": "RANGE"},
                   {"AttributeName": "id", "KeyType": "HASH"}]}]}');
SELECT ddb.execute('CreateTable', '{"TableName": "Bad", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}, {"AttributeName": "a", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [{"IndexName": "G", "Projection": {"ProjectionType": "ALL"},
     "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}, {"AttributeName": "a", "KeyType": "HASH"}]}]}');
SELECT ddb.execute('CreateTable', '{"TableName": "Bad", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}, {"AttributeName": "a", "AttributeType": "S"},
                           {"AttributeName": "b", "AttributeType": "S"}, {"AttributeName": "c", "AttributeType": "S"},
                           {"AttributeName": "d", "AttributeType": "S"}, {"AttributeName": "e", "AttributeType": "S"}],
  "GlobalSecondaryIndexes": [{"IndexName": "G", "Projection": {"ProjectionType": "ALL"},
     "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"}, {"AttributeName": "b", "KeyType": "HASH"},
                   {"AttributeName": "c", "KeyType": "HASH"}, {"AttributeName": "d", "KeyType": "HASH"},
                   {"AttributeName": "e", "KeyType": "HASH"}]}]}');
SELECT ddb.execute('CreateTable', '{"TableName": "Bad", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}, {"AttributeName": "s", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}, {"AttributeName": "s", "AttributeType": "S"},
                           {"AttributeName": "a", "AttributeType": "S"}, {"AttributeName": "b", "AttributeType": "S"}],
  "LocalSecondaryIndexes": [{"IndexName": "L", "Projection": {"ProjectionType": "ALL"},
     "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}, {"AttributeName": "a", "KeyType": "RANGE"},
                   {"AttributeName": "b", "KeyType": "RANGE"}]}]}');
-- tuple keys in SQL: a text form that round-trips, ordered element by element
SELECT '\(6:USER#1,4:\d42)'::ddb.ddb_key AS tuple, ddb.key_type('\(6:USER#1,4:\d42)') AS type;
SELECT k FROM (VALUES ('\(1:a,4:\d10)'::ddb.ddb_key), ('\(1:a,3:\d9)'), ('\(2:ab,3:\d1)'), ('\(1:a,5:\d-10)'),
                      ('\(1:a,6:\x00ff)'), ('\(1:a)')) v(k) ORDER BY k;
SELECT '\(1:a,'::ddb.ddb_key;
SELECT '\(2:a)'::ddb.ddb_key;
SELECT '\(0:)'::ddb.ddb_key;
SELECT '\(1:a,1:b,1:c,1:d,1:e)'::ddb.ddb_key;
SELECT ddb.execute('DeleteTable', '{"TableName": "Matches"}') -> 'TableDescription' ->> 'TableStatus';

-- single-attribute keys: a value first, and start keys within the key condition
SELECT ddb.execute('CreateTable', '{"TableName": "Events", "BillingMode": "PAY_PER_REQUEST",
  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"}]}')
  -> 'TableDescription' ->> 'TableStatus';
SELECT ddb.put_item('Events', jsonb_build_object('pk', p, 'sk', s)) FROM (VALUES ('a', 1), ('a', 2), ('a', 3), ('b', 1)) v(p, s);
SELECT ddb.execute('Query', '{"TableName": "Events", "KeyConditionExpression": ":p = pk AND :lo <= sk",
  "ExpressionAttributeValues": {":p": {"S": "a"}, ":lo": {"N": "2"}}}') -> 'Items';
SELECT ddb.execute('Query', '{"TableName": "Events", "KeyConditionExpression": "pk = :p AND sk > :lo",
  "ExpressionAttributeValues": {":p": {"S": "a"}, ":lo": {"N": "1"}},
  "ExclusiveStartKey": {"pk": {"S": "a"}, "sk": {"N": "2"}}}') -> 'Items';
SELECT ddb.execute('Query', '{"TableName": "Events", "KeyConditionExpression": "pk = :p AND sk > :lo",
  "ExpressionAttributeValues": {":p": {"S": "a"}, ":lo": {"N": "1"}},
  "ExclusiveStartKey": {"pk": {"S": "a"}, "sk": {"N": "1"}}}');
SELECT ddb.execute('Query', '{"TableName": "Events", "KeyConditionExpression": "pk = :p",
  "ExpressionAttributeValues": {":p": {"S": "a"}},
  "ExclusiveStartKey": {"pk": {"S": "b"}, "sk": {"N": "1"}}}');
SELECT ddb.execute('Query', '{"TableName": "Events", "KeyConditionExpression": ":p = :q",
  "ExpressionAttributeValues": {":p": {"S": "a"}, ":q": {"S": "a"}}}');
SELECT ddb.execute('DeleteTable', '{"TableName": "Events"}') -> 'TableDescription' ->> 'TableStatus';
