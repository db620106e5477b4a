-- expect: call_depth
-- Unbounded recursion in Lua.
local function f(n) return 1 + f(n + 1) end
return f(1)
