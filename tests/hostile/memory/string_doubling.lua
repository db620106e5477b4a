-- expect: string_size
-- Doubling a string until it passes the string limit.
local s = 'x'
while true do s = s .. s end
