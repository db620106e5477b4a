-- expect: output_limit
-- A refused write returns nil, message; the script cannot go on.
local t = {}
while true do
  local ok, err = io.stdout:write(('y'):rep(4096))
  if not ok then t[#t + 1] = err end
end
