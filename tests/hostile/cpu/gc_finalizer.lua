-- expect: fuel_exhausted
-- A loop inside a __gc finalizer. Lua turns hooks off in finalizers, so only the outer wall stops it.
setmetatable({}, { __gc = function() while true do end end })
collectgarbage()
return 'escaped'
