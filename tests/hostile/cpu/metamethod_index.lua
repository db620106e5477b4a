-- expect: instruction_limit
-- A loop inside __index.
local t = setmetatable({}, { __index = function() while true do end end })
return pcall(function() return t.x end)
