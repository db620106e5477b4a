-- expect: instruction_limit
-- A loop in code built at run time with load.
assert(load('while true do end'))()
