-- expect: sandboxed
-- Dumping bytecode to craft a binary chunk.
return string.dump(function() return 1 end)
