-- expect: output_limit
-- Empty log events, caught or not, still cost a fixed charge each: the flood
-- stops at max-output-bytes, not at the instruction limit.
while true do pcall(log, 'debug', '') end
