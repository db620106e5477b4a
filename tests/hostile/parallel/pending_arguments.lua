-- expect: instruction_limit
-- Two thousand waiting calls, each with a megabyte argument, held by the
-- guest until the batch goes out: each argument's conversion is charged,
-- so the count stops it after a few, long before the memory could fill.
local s = string.rep('x', 1e6)
local t = {}
for i = 1, 2000 do t[i] = i end
parallel(t, function() return records.get(s) end)
