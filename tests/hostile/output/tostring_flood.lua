-- expect: output_limit
-- A __tostring that returns a large string, printed repeatedly.
local big = setmetatable({}, { __tostring = function() return ('z'):rep(10000) end })
while true do print(big) end
