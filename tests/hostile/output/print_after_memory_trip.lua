-- expect: memory_limit
-- After the heap limit trips, a caught error must not let the script print
-- or work: the trip ends the eval at once.
local ok = pcall(function() local t = {} for i = 1, 1e9 do t[i] = ('x'):rep(64) .. i end end)
for i = 1, 1e6 do print('still running', i) end
