-- expect: sandboxed
-- Removing the instruction hook.
debug.sethook()
while true do end
