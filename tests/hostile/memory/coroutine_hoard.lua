-- expect: memory_limit
-- Suspended coroutines kept alive, each holding a few kilobytes, until the heap is full.
local cos = {}
while true do
  local co = coroutine.wrap(function() local s = ('x'):rep(4096) .. #cos coroutine.yield() return s end)
  co()
  cos[#cos + 1] = co
end
