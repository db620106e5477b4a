-- expect: instruction_limit
-- A tree of short coroutines, each starting its children at once, to hide work from per-thread counting.
local function grow(depth)
  if depth == 0 then return end
  coroutine.wrap(grow)(depth - 1)
  coroutine.wrap(grow)(depth - 1)
end
grow(40)
