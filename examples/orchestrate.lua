-- Orchestration: look every id up at once with parallel, log what is
-- missing as a structured event, and return a summary as JSON text.
--   moonbox run --records examples/records.json examples/orchestrate.lua
local ids = {"123", "456", "789"}
local found = parallel(ids, records.get) -- the three calls are in flight together

local summary = {}
for i, id in ipairs(ids) do
  local record = found[i]
  if record then
    summary[#summary + 1] = {id = id, name = record.name, visits = #record.visits}
  else
    log("warn", "no record", {id = id})
  end
end
print(json.encode(summary))
return #summary
