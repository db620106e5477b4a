-- expect: runtime
-- Source nested too deeply for the parser: Lua's C-stack guard, not a crash.
-- Lua's own C-stack guard stops it: a runtime error with lua5.4's message.
return assert(load(('('):rep(1000) .. '1' .. (')'):rep(1000)))
