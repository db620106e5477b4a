-- expect: call_depth
-- Recursion through C: a gsub callback that calls gsub.
local function f(s) return (s:gsub('.', f)) end
return f('ab')
