-- expect: instruction_limit
-- An infinite loop inside a coroutine, resumed under pcall.
local co = coroutine.wrap(function() while true do end end)
pcall(co)
return 'escaped'
