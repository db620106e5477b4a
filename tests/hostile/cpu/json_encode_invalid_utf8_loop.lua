-- expect: instruction_limit
-- A long string that is not UTF-8 only in its last byte is checked in full
-- before json.encode refuses it; the check is charged, so a loop of such
-- refusals ends at the instruction limit, not the timeout.
local s = ('a'):rep((1 << 20) - 1) .. '\255'
while true do pcall(json.encode, s) end
