-- bench/gateway/request.lua — wrk script: one DynamoDB operation against
-- the table bench/gateway/load.js preloaded, and a check of every response.
--
--   wrk -t1 -c1 -d12s -s bench/gateway/request.lua http://127.0.0.1:8101 -- OPERATION USERS [FIRST]
--
-- GetItem: a random one of the USERS preloaded users' items; Query: pk = a
-- random user AND begins_with(sk, "ORDER#") (16 items); both from 10,000
-- requests prepared in init.  PutItem: a new item every request (new users
-- from FIRST on, 16 orders each, the shape load.js writes; thread i from
-- FIRST + i * 1,000,000), formatted as it is sent.  A response counts as
-- bad unless it is a 200 and, for reads, carries the item(s); done() prints
-- "checked N bad M".
--
-- Every request carries a fixed SigV4-shaped Authorization header: dynalite
-- and DynamoDB Local parse it without checking the signature, the gateway
-- runs with --development.

local threads = {}

-- Numbers the threads (their puts write different keys) and keeps them for done().
function setup(thread)
   thread:set("id", #threads)
   table.insert(threads, thread)
end

-- The n-th order (0..15) of user u, as load.js writes it.
local function item(u, n)
   local order = string.format("%08d", u * 16 + n)
   local day = string.format("%02d", n + 1)
   return string.format('{"pk":{"S":"USER#%d"},"sk":{"S":"ORDER#2026-01-%s#%s"},"orderId":{"S":"%s"},'
      .. '"status":{"S":"%s"},"total":{"N":"%d.95"},"currency":{"S":"EUR"},"quantity":{"N":"%d"},'
      .. '"createdAt":{"S":"2026-01-%sT10:15:00Z"},"shipTo":{"M":{"street":{"S":"12 rue de la République"},'
      .. '"city":{"S":"Lyon"},"zip":{"S":"69002"}}},"tags":{"SS":["gift","express"]},'
      .. '"note":{"S":"Leave the parcel with the concierge if nobody answers."}}',
      u, day, order, order, n % 3 ~= 0 and "SHIPPED" or "PENDING", u % 500 + n, n % 5 + 1, day)
end

local operation, users, first, expect
local prepared, next_request, puts = {}, 0, 0

-- Reads the arguments, and prepares the requests of a read.
function init(args)
   operation, users, first = args[1], tonumber(args[2]), tonumber(args[3] or 0)
   count, bad = 0, 0
   wrk.method = "POST"
   wrk.headers["Content-Type"] = "application/x-amz-json-1.0"
   wrk.headers["X-Amz-Target"] = "DynamoDB_20120810." .. operation
   wrk.headers["X-Amz-Date"] = "20260101T000000Z"
   wrk.headers["Authorization"] = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/dynamodb/aws4_request, "
      .. "SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=" .. string.rep("ab", 32)
   math.randomseed(os.time() + id * 7919)
   if operation == "GetItem" then
      expect = '"orderId"'
      for i = 1, 10000 do
         local u, n = math.random(0, users - 1), math.random(0, 15)
         local key = string.format('{"pk":{"S":"USER#%d"},"sk":{"S":"ORDER#2026-01-%02d#%08d"}}', u, n + 1, u * 16 + n)
         prepared[i] = wrk.format(nil, nil, nil, '{"TableName":"GwBench","Key":' .. key .. '}')
      end
   elseif operation == "Query" then
      expect = '"orderId"'
      for i = 1, 10000 do
         prepared[i] = wrk.format(nil, nil, nil, string.format('{"TableName":"GwBench",'
            .. '"KeyConditionExpression":"pk = :p AND begins_with(sk, :s)",'
            .. '"ExpressionAttributeValues":{":p":{"S":"USER#%d"},":s":{"S":"ORDER#"}}}', math.random(0, users - 1)))
      end
   elseif operation ~= "PutItem" then
      error("unknown operation " .. operation)
   end
end

-- The next prepared read, or a put of the next new item.
function request()
   if operation == "PutItem" then
      local u = first + id * 1000000 + math.floor(puts / 16)
      local body = '{"TableName":"GwBench","Item":' .. item(u, puts % 16) .. '}'
      puts = puts + 1
      return wrk.format(nil, nil, nil, body)
   end
   next_request = next_request % #prepared + 1
   return prepared[next_request]
end

-- Counts the responses, and the bad ones.
function response(status, headers, body)
   count = count + 1
   if status ~= 200 or (expect and not body:find(expect, 1, true)) then
      bad = bad + 1
   end
end

-- Prints the responses checked and the bad ones over all threads.
function done(summary, latency, requests)
   local n, b = 0, 0
   for _, thread in ipairs(threads) do
      n, b = n + thread:get("count"), b + thread:get("bad")
   end
   io.write(string.format("checked %d bad %d\n", n, b))
end
