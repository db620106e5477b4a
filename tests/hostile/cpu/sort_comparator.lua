-- expect: instruction_limit
-- A loop inside a table.sort comparator.
local t = {}
for i = 1, 50 do t[i] = i end
pcall(table.sort, t, function() while true do end end)
return 'escaped'
