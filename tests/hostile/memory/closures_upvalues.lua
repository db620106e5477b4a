-- expect: memory_limit
-- Many closures, each holding upvalues.
local fs = {}
for i = 1, 1e9 do
  local a, b, c, d = i, i + 1, i + 2, i + 3
  fs[i] = function() return a + b + c + d end
end
