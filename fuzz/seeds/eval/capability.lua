local ok, v = pcall(echo, {list = {1, 2, 3}, name = "x"})
return ok, v
