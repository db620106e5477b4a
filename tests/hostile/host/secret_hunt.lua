-- expect: ok
-- returns: [0]
-- Searching everything reachable for the host's secret: nothing.
local seen, found = {}, 0
local function visit(v, depth)
  if depth > 20 then return end
  if type(v) == 'string' then if v:find('sk-live', 1, true) then found = found + 1 end return end
  if type(v) ~= 'table' or seen[v] then return end
  seen[v] = true
  for k, x in next, v do visit(k, depth + 1) visit(x, depth + 1) end
  visit(getmetatable(v), depth + 1)
end
visit(_G, 0)
visit(records.get('123'), 0)
visit(auth.ping(), 0)
visit(auth, 0)
visit(getmetatable(''), 0)
return found
