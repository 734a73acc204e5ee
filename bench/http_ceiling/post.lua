-- bench/http_ceiling/post.lua — wrk's request for bench/http_ceiling.sh: a
-- POST of about 200 bytes, as a GetItem of DynamoDB's JSON protocol is (no
-- per-request Lua: wrk sends the same request on every connection).
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/x-amz-json-1.0"
wrk.headers["X-Amz-Target"] = "DynamoDB_20120810.GetItem"
wrk.body = '{"TableName":"GwBench","Key":{"pk":{"S":"USER#42"},"sk":{"S":"ORDER#2026-01-01#00000672"}},'
    .. '"ConsistentRead":true,"ProjectionExpression":"pk, sk, #s","ExpressionAttributeNames":{"#s":"status"}}'
