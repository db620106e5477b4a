-- expect: sandboxed
-- Reaching string.dump through the string metatable.
return getmetatable('').__index.dump(print)
