-- expect: memory_limit
-- Growing inside pcall: running out of memory cannot be caught.
local t = {}
pcall(function()
  while true do t[#t + 1] = ('x'):rep(1000) .. #t end
end)
return #t
