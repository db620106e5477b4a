-- expect: ok
-- returns: [0, 0, 0]
-- Reaching the originals behind the sandbox's wrappers through the safe
-- debug functions: C functions' upvalues and C frames' functions are out of
-- reach.
local found = 0
for _, f in ipairs({ load, loadfile, dofile, xpcall, require, collectgarbage, string.rep, debug.getinfo }) do
  if debug.getupvalue(f, 1) ~= nil then found = found + 1 end
end
local c_frames = 0
local reader_done = false
load(function()
  if reader_done then return nil end
  reader_done = true
  for level = 1, 10 do
    local info = debug.getinfo(level, 'Sf')
    if info and info.what == 'C' and info.func ~= nil then c_frames = c_frames + 1 end
  end
  return 'return 1'
end)
local ok = pcall(debug.setmetatable, io.stdout, nil)
return found, c_frames, ok and 1 or 0
