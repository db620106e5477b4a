-- expect: call_depth
-- Recursion through C: __tostring calling tostring on itself.
local t = setmetatable({}, {})
getmetatable(t).__tostring = function(self) return tostring(self) end
return tostring(t)
