-- expect: instruction_limit
-- Fifty thousand coroutines, each with a capability call waiting: every
-- coroutine and every call is charged, so the count stops it.
local ids = {}
for i = 1, 50000 do ids[i] = tostring(i) end
return #parallel(ids, records.get)
