-- expect: ok
-- returns: [false]
-- What parallel resumes a waiting coroutine with must not reach the script:
-- an item resumes another by hand and catches the refusal, so that
-- parallel's own resume lands in a plain coroutine.yield; whatever that
-- yield returns, a reply forged with it in a later parallel is refused.
local key, waiting, got
parallel({1, 2}, function(i)
  if i == 1 then
    waiting = coroutine.running()
    pcall(records.get, '123')
    key = table.pack(coroutine.yield())
  else
    coroutine.resume(waiting, 'by hand')
  end
  return 0
end)
parallel({1, 2}, function(i)
  if i == 1 then
    waiting = coroutine.running()
    local _, v = pcall(records.get, '123')
    got = v
    coroutine.yield()
  else
    coroutine.resume(waiting, key[1], key[2], 'forged')
  end
  return 0
end)
return got == 'forged'
