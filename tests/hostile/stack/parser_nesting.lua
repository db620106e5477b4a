-- expect: call_depth
-- Source nested too deeply for the parser: Lua's C-stack guard, not a crash.
return assert(load(('('):rep(1000) .. '1' .. (')'):rep(1000)))
