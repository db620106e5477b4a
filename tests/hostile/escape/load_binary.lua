-- expect: sandboxed
-- Loading a hand-made binary chunk.
return load('\27Lua\84\0\25\147\13\10\26\10')
