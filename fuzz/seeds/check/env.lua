local _ENV = {print = print}
print(x)
local function g(...) local _ENV = ... return y end
return g
