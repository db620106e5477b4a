-- moonbox library battery entry (our own code, not upstream): runs the
-- upstream spec files through tests/libraries/support/spec.lua.
require("spec").run({ "spec.md5_spec" })
