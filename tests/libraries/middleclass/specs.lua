-- moonbox library battery entry (our own code, not upstream): runs the
-- upstream spec files through tests/libraries/support/spec.lua.
local why = "Lua 5.4 removed the __ipairs metamethod (fails under lua5.4 itself)"
require("spec").run({
  "spec.class_spec",
  "spec.classes_spec",
  "spec.default_methods_spec",
  "spec.instances_spec",
  "spec.metamethods_spec",
  "spec.mixins_spec",
}, { skip = {
  ["Lua 5.2 Metamethods implements __ipairs"] = why,
  ["Lua 5.2 Metamethods Inherited Metamethods implements __ipairs"] = why,
} })
