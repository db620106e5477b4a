-- expect: instruction_limit
-- Calling a capability forever.
while true do records.get('123') end
