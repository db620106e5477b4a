-- expect: runtime
-- Negative collector parameters would make every allocation run the
-- collector: they are refused like any other bad argument.
collectgarbage('incremental', -1, -1, -1)
local t = {}
for i = 1, 1e6 do t[i % 100] = {} end
