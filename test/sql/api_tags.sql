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
