-- expect: instruction_limit
-- A trip inside a coroutine must not let its pending __close handler (a loop) run.
local f = coroutine.wrap(function()
  local x <close> = setmetatable({}, { __close = function() while true do end end })
  while true do end
end)
pcall(f)
return 'escaped'
