-- expect: instruction_limit
-- A loop inside __tostring, reached through print.
print(setmetatable({}, { __tostring = function() while true do end end }))
