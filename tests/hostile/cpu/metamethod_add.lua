-- expect: instruction_limit
-- A loop inside __add.
local v = setmetatable({}, { __add = function() while true do end end })
return pcall(function() return v + 1 end)
