-- expect: instruction_limit
-- A loop inside an xpcall message handler.
return xpcall(function() error('x') end, function() while true do end end)
