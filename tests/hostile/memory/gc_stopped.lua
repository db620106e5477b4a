-- expect: ok
-- returns: ["done"]
-- Stopping the collector is harmless: the garbage is bounded by the heap limit, and this much fits.
collectgarbage('stop')
for i = 1, 2e5 do local garbage = { i } end
return 'done'
