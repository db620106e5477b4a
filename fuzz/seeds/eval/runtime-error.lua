local t = setmetatable({}, {__index = function() error({code = 1}) end})
return t.x
