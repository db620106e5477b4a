-- expect: instruction_limit
-- A loop inside a to-be-closed variable's __close.
do
  local x <close> = setmetatable({}, { __close = function() while true do end end })
end
return 'escaped'
