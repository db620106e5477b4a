-- require loads only modules the host registered; nothing touches a disk.
--
--   moonbox run --module greet=examples/modules/greet.lua examples/modules/main.lua
local greet = require("greet")
print(greet.hello("moon"))
return package.loaded.greet == greet
