-- moonbox library battery entry (our own code, not upstream): runs the
-- upstream spec files through tests/libraries/support/spec.lua.
-- (spec/integrity_spec.lua is left out: it runs `lua spec/script.lua` as a
-- subprocess through io.popen.)
require("spec").run({
  "spec.actions_spec",
  "spec.arguments_spec",
  "spec.commands_spec",
  "spec.convert_spec",
  "spec.default_spec",
  "spec.help_spec",
  "spec.invalid_property_spec",
  "spec.mutex_spec",
  "spec.options_spec",
  "spec.pparse_spec",
  "spec.tip_spec",
  "spec.usage_spec",
})
