-- expect: instruction_limit
-- Coroutines that loop forever, each resume catching the error.
while true do
  local co = coroutine.create(function() while true do end end)
  coroutine.resume(co)
end
