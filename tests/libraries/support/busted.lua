-- The `busted` module some spec files require for describe/it/assert
-- (our own code, not upstream): the functions of support/spec.lua.
return require("spec")
