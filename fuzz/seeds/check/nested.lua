local name = 1
local f = function() return function() return function() return name + missing end end end
host.touch()
return f
