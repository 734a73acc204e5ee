-- bench/gateway/signed.lua — wrk script: sends the requests
-- bench/gateway/presign.js signed in advance, each thread its own share of
-- the file's lines in turn, and checks every response.
--
--   wrk -t2 -c8 -d10s -s bench/gateway/signed.lua http://127.0.0.1:8111 -- FILE OPERATION THREADS
--
-- A response counts as bad unless it is a 200 and, for reads, carries the
-- item(s); done() prints "checked N bad M".

local threads = {}

-- Numbers the threads (each sends its own lines) and keeps them for done().
function setup(thread)
   thread:set("id", #threads)
   table.insert(threads, thread)
end

local prepared, next_request = {}, 0
local expect

-- Reads this thread's share of the signed requests.
function init(args)
   local file, operation, nthreads = args[1], args[2], tonumber(args[3])
   count, bad = 0, 0
   if operation ~= "PutItem" then
      expect = '"orderId"'
   end
   local line_no = 0
   for line in io.lines(file) do
      if line_no % nthreads == id then
         local date, auth, body = line:match("^([^\t]*)\t([^\t]*)\t(.*)$")
         prepared[#prepared + 1] = wrk.format("POST", "/", {
            ["Content-Type"] = "application/x-amz-json-1.0",
            ["X-Amz-Target"] = "DynamoDB_20120810." .. operation,
            ["X-Amz-Date"] = date,
            ["Authorization"] = auth,
         }, body)
      end
      line_no = line_no + 1
   end
end

-- The thread's next signed request (from its first again after its last).
function request()
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
   io.write(string.format("latency p50 %.0f p99 %.0f us\n", latency:percentile(50), latency:percentile(99)))
end
