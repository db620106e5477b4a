-- expect: instruction_limit
-- A loop inside a __gc finalizer. Lua turns hooks off in finalizers, but the instruction budget is
-- not a hook: it counts finalizers too, and the trip (which the collector reports as a warning)
-- is raised again when the script goes on.
setmetatable({}, { __gc = function() while true do end end })
collectgarbage()
return 'escaped'
