-- expect: call_depth
-- Recursion that calls a capability on every level.
local function f(n) records.get('x') return 1 + f(n + 1) end
return f(1)
