-- expect: runtime
-- Recursion through C: __tostring calling tostring on itself.
-- Lua's own C-stack guard stops it: a runtime error with lua5.4's message.
local t = setmetatable({}, {})
getmetatable(t).__tostring = function(self) return tostring(self) end
return tostring(t)
