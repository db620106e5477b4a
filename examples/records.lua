-- The agent scenario: look a record up through the records.get capability,
-- report progress with print, and return a summary as the result.
--
--   moonbox run --records examples/records.json examples/records.lua
local r = records.get("123")
if not r then
  error("no record 123")
end
print("visits:", #r.visits)
return { name = r.name, last_visit = r.visits[#r.visits].at }
