-- expect: instruction_limit
-- json.encode walks every key of a large table before it refuses the one
-- integer key among them: the walk is charged, failed or not, so a loop of
-- such refusals ends at the instruction limit, not the timeout.
local t = {}
for i = 1, 100000 do t['key' .. i] = i end
t[1] = true
while true do pcall(json.encode, t) end
