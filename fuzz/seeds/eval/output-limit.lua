for i = 1, 1e6 do io.write(string.rep("x", 100)) end
