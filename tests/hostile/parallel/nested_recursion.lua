-- expect: runtime
-- parallel inside parallel without end: Lua's own C stack guard stops it.
local function f(n) return parallel({n}, function(x) return f(x + 1) end) end
return f(1)
