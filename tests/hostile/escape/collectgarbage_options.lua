-- expect: ok
-- returns: ["number", true]
-- Every collectgarbage option is harmless.
collectgarbage('stop')
collectgarbage('restart')
collectgarbage('step', 1)
collectgarbage('incremental')
collectgarbage('generational')
collectgarbage('incremental')
return type(collectgarbage('count')), collectgarbage('isrunning')
