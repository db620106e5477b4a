local function f(
  return
