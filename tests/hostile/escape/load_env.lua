-- expect: sandboxed
-- Passing os through load's env argument.
local f = load('return os.execute', 'x', 't', { os = os })
return f()('ls')
