-- expect: memory_limit
-- A million items: each coroutine is charged and allocated in the heap.
local t = {}
for i = 1, 1e6 do t[i] = i end
parallel(t, function() end)
