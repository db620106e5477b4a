-- expect: memory_limit
-- A table that grows until the heap limit.
local t = {}
for i = 1, 1e9 do t[i] = { i, i, i, i } end
