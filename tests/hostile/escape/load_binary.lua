-- expect: sandboxed
-- Loading a hand-made binary chunk.
return assert(load('\27Lua\84\0\25\147\13\10\26\10'))
