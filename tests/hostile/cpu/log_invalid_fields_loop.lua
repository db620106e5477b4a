-- expect: instruction_limit
-- log's fields are converted as json.encode converts them; a refusal after
-- a long walk is charged, so a loop of them ends at the instruction limit.
local fields = { text = ('a'):rep((1 << 20) - 1) .. '\255' }
while true do pcall(log, 'info', 'x', fields) end
