-- expect: instruction_limit
-- The same through coroutine.resume and an explicit coroutine.close.
local co = coroutine.create(function()
  local x <close> = setmetatable({}, { __close = function() while true do end end })
  while true do end
end)
coroutine.resume(co)
coroutine.close(co)
return 'escaped'
