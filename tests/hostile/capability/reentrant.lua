-- expect: ok
-- returns: ["nn", "Ada"]
-- Capabilities called from callbacks and coroutines.
local s = ('12'):gsub('.', function(c) return records.get(c) and 'y' or 'n' end)
local co = coroutine.wrap(function() return records.get('123').name end)
return s, co()
