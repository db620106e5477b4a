-- expect: instruction_limit
-- Comparing two distinct, equal one-megabyte strings is one VM instruction
-- and a megabyte of work. The comparison is charged by its length, before
-- it is made, so a loop of them ends at the instruction limit.
local a, b = ('x'):rep(1 << 20), ('x'):rep(1 << 20)
local n = 0
while true do
  if a == b and a <= b and not (a < b) then n = n + 1 end
end
