-- TagResource, UntagResource and ListTagsOfResource on a table's ARN.
\set SHOW_CONTEXT never
SELECT ddb.create_table('Tagged', 'pk');
SELECT ddb.execute('DescribeTable', '{"TableName": "Tagged"}') -> 'Table' ->> 'TableArn' AS arn \gset
SELECT ddb.execute('TagResource', jsonb_build_object('ResourceArn', :'arn',
    'Tags', '[{"Key": "env", "Value": "test"}, {"Key": "team", "Value": "data"}]'::jsonb));
SELECT ddb.execute('TagResource', jsonb_build_object('ResourceArn', :'arn', 'Tags', '[{"Key": "env", "Value": "production"}]'::jsonb));
SELECT ddb.execute('UntagResource', jsonb_build_object('ResourceArn', :'arn', 'TagKeys', '["team"]'::jsonb));
SELECT ddb.execute('ListTagsOfResource', jsonb_build_object('ResourceArn', :'arn'));
-- a malformed ARN, an ARN of no table here, a tag without a value
SELECT ddb.execute('TagResource', '{"ResourceArn": "not-a-valid-arn", "Tags": [{"Key": "a", "Value": "b"}]}');
SELECT ddb.execute('ListTagsOfResource', '{"ResourceArn": "arn:aws:dynamodb:us-east-1:000000000000:table/nonexistent_table"}');
SELECT ddb.execute('TagResource', jsonb_build_object('ResourceArn', :'arn', 'Tags', '[{"Key": "a"}]'::jsonb));
SELECT ddb.delete_table('Tagged');
-- CreateTable's Tags tag the new table, checked as TagResource checks them
SELECT ddb.execute('CreateTable', '{"TableName": "Born", "BillingMode": "PAY_PER_REQUEST",
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "Tags": [{"Key": "env", "Value": "test"}, {"Key": "owner", "Value": "billing"}]}') IS NOT NULL AS created;
SELECT ddb.execute('DescribeTable', '{"TableName": "Born"}') -> 'Table' ->> 'TableArn' AS arn \gset
SELECT ddb.execute('ListTagsOfResource', jsonb_build_object('ResourceArn', :'arn'));
SELECT ddb.execute('CreateTable', '{"TableName": "Unborn", "BillingMode": "PAY_PER_REQUEST",
    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
    "Tags": [{"Key": "env"}]}');
SELECT ddb.execute('CreateTable', jsonb_build_object('TableName', 'Unborn', 'BillingMode', 'PAY_PER_REQUEST',
    'KeySchema', '[{"AttributeName": "pk", "KeyType": "HASH"}]'::jsonb, 'AttributeDefinitions', '[{"AttributeName": "pk", "AttributeType": "S"}]'::jsonb,
    'Tags', (SELECT jsonb_agg(jsonb_build_object('Key', 'k' || i, 'Value', 'v')) FROM generate_series(1, 51) i)));
SELECT count(*) AS unborn FROM ddb.tables WHERE table_name = 'Unborn';
SELECT ddb.delete_table('Born');
