-- expect: runtime
-- Recursion through C: a gsub callback that calls gsub.
-- Lua's own C-stack guard stops it: a runtime error with lua5.4's message.
local function f(s) return (s:gsub('.', f)) end
return f('ab')
