-- expect: output_limit
-- Printing forever.
while true do print('flood') end
