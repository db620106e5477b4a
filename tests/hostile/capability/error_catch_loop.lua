-- expect: instruction_limit
-- Catching capability errors forever.
while true do pcall(records.get, 1) end
