-- What a model sees when its script goes wrong. Each case is caught with
-- pcall and printed; the last one is left uncaught to end the run.
local function show(label, f, ...)
  local ok, err = pcall(f, ...)
  print(label, ok, err)
end

show("nil index:", function() return nope.x end)
show("bad argument:", string.rep)
show("sandboxed (absent):", function() return os.execute ~= nil, os.execute("ls") end)
show("error value:", error, { code = 42 })
show("syntax via load:", function() return assert(load("return (")) end)

-- Limits cannot be caught: this loop ends the run with error[instruction_limit].
pcall(function() while true do end end)
print("never printed")
