-- moonbox library battery entry (our own code, not upstream): runs the
-- upstream spec files through tests/libraries/support/spec.lua.
require("spec").run({ "spec.context_spec", "spec.parse_spec", "spec.render_spec" })
