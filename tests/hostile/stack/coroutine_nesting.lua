-- expect: runtime
-- Coroutines resumed inside coroutines, without end.
-- Lua's own C-stack guard stops it: a runtime error with lua5.4's message.
local function nest() return coroutine.wrap(nest)() end
return nest()
