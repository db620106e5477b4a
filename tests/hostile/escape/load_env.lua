-- expect: runtime
-- Passing os through load's env argument: os.execute is absent (nil) there
-- too, so the call fails.
local f = load('return os.execute', 'x', 't', { os = os })
return f()('ls')
