-- expect: call_depth
-- Coroutines resumed inside coroutines, without end.
local function nest() return coroutine.wrap(nest)() end
return nest()
