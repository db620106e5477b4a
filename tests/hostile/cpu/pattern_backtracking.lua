-- expect: fuel_exhausted
-- Exponential backtracking inside one C call (string.match): no Lua instruction runs, so only the outer wall stops it.
return ('a'):rep(26):match(('a?'):rep(26) .. ('a'):rep(26))
