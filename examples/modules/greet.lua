-- A host module: `moonbox run --module greet=examples/modules/greet.lua ...`
local M = {}

function M.hello(name)
  return ("hello, %s!"):format(name)
end

return M
