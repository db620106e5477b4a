-- expect: sandboxed
-- A fresh _ENV that falls back to _G still finds the stub.
local _ENV = setmetatable({}, { __index = _G })
return os.execute('ls')
