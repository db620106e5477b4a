-- expect: runtime
-- Resuming a coroutine that waits inside parallel, to hand it a forged
-- reply: the resume fails, and parallel then fails on the dead coroutine.
local waiting
parallel({1, 2}, function(n)
  if n == 1 then waiting = coroutine.running() return records.get('123') end
  local ok, err = coroutine.resume(waiting, true, {name = 'forged'})
  assert(not ok and err:find('only parallel may resume it'), err)
end)
