-- expect: instruction_limit
-- Replacing the string metatable's __index with a loop.
getmetatable('').__index = function() while true do end end
return ('x'):len()
