-- expect: instruction_limit
-- A lookup through a chain of 1,990 __index tables is one VM instruction
-- and 1,990 steps. Each step past the 16th is charged, so a loop of such
-- lookups ends at the instruction limit, not after the fuel.
local t = {}
for i = 1, 1990 do t = setmetatable({}, { __index = t }) end
while true do local _ = t.missing end
