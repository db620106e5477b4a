-- expect: sandboxed
-- Setting a hook, which needs `debug.sethook` allowed by name.
debug.sethook()
while true do end
