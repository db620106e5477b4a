-- expect: sandboxed
-- A metatable on _G cannot resurrect removed functions.
setmetatable(_G, { __index = function() return print end })
return os.execute('ls')
