-- expect: call_depth
-- Unbounded recursion under pcall.
local function f(n) return 1 + f(n + 1) end
pcall(f, 1)
return 'escaped'
