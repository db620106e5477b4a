-- expect: runtime
-- Recursion through C: an __index that indexes itself.
-- Lua's own C-stack guard stops it: a runtime error with lua5.4's message.
local t = setmetatable({}, {})
getmetatable(t).__index = function(t, k) return t[k] end
return t.x
