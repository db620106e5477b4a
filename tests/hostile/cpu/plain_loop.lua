-- expect: instruction_limit
-- A plain infinite loop.
while true do end
