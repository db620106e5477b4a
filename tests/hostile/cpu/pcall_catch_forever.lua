-- expect: instruction_limit
-- A loop that keeps catching the limit with pcall.
while true do
  pcall(function() while true do end end)
end
