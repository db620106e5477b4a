-- expect: call_depth
-- Recursion through C: an __index that indexes itself.
local t = setmetatable({}, {})
getmetatable(t).__index = function(t, k) return t[k] end
return t.x
