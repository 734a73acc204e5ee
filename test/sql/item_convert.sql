-- ddb.from_dynamodb / ddb.to_dynamodb: DynamoDB JSON and natural items, both ways.
\set SHOW_CONTEXT never
SELECT ddb.from_dynamodb('{"s": {"S": "x"}, "n": {"N": "01.50"}, "b": {"B": "AAE="}, "t": {"BOOL": true},
  "z": {"NULL": true}, "ss": {"SS": ["b", "a"]}, "ns": {"NS": ["10", "9"]}, "l": {"L": [{"S": "e"}, {"N": "1"}]},
  "m": {"M": {"k": {"S": "v"}}}}');
-- a round trip gives back the item, numbers canonical and sets sorted
SELECT ddb.to_dynamodb(ddb.from_dynamodb('{"s": {"S": "x"}, "n": {"N": "01.50"}, "b": {"B": "AAE="},
  "ss": {"SS": ["b", "a"]}, "l": {"L": [{"S": "e"}]}, "m": {"M": {"$weird": {"S": "v"}}}}'));
SELECT ddb.to_dynamodb('{"a": 1, "b": [true, null]}');
-- errors: not an object, an unknown type, a bad number
SELECT ddb.from_dynamodb('[1]');
SELECT ddb.to_dynamodb('"x"');
SELECT ddb.from_dynamodb('{"a": {"Q": "1"}}');
SELECT ddb.from_dynamodb('{"a": {"N": "one"}}');
SELECT ddb.from_dynamodb(NULL) IS NULL AS strict;
