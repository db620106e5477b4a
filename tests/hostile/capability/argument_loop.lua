-- expect: instruction_limit
-- A megabyte argument built from one shared string: each call converts it
-- (and the host parses it) again. The conversion is charged, so a loop of
-- calls ends at the instruction limit, not the timeout.
local s = ('x'):rep(1000)
local big = {}
for i = 1, 1000 do big[i] = s end
while true do pcall(records.get, big) end
