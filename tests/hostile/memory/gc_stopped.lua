-- expect: ok
-- returns: ["done"]
-- Stopping the collector does not defeat the heap limit: emergency collections still run.
collectgarbage('stop')
for i = 1, 2e5 do local garbage = { i } end
return 'done'
