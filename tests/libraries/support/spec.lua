-- A small busted-style runner for the library battery (our own code, not
-- upstream): describe/it/before_each/after_each/setup/teardown/pending/finally
-- over luassert. Spec files are loaded with require, never from the
-- filesystem, so the same entry runs under lua5.4 and inside moonbox.
--
--   local spec = require("spec")
--   spec.run({ "spec.foo_spec", "spec.bar_spec" }, { skip = { [name] = why } })
--
-- Prints one line per test and a summary line; when a test fails or errors,
-- spec.run raises that summary (so lua5.4 and moonbox both exit non-zero).

local luassert = require("luassert")
local spy = require("luassert.spy")
local stub = require("luassert.stub")
local mock = require("luassert.mock")
local match = require("luassert.match")

local M = {}

local current          -- the block whose body is being collected
local running          -- the test being run (for finally)
local counts = { passed = 0, failed = 0, pending = 0 }
local skip = {}        -- full test name -> why it is skipped (spec.run's option)

local function block(name, parent)
  return { name = name, parent = parent, children = {}, before = {}, after = {},
           setup = {}, teardown = {} }
end

local function add(list, fn)
  assert(current, "describe/it/hooks used outside of a spec file")
  list[#list + 1] = fn
end

function M.describe(name, fn)
  add(current.children, { kind = "describe", name = name, fn = fn })
end

function M.it(name, fn)
  add(current.children, { kind = fn and "it" or "pending", name = name, fn = fn })
end

function M.pending(name)
  add(current.children, { kind = "pending", name = name })
end

function M.before_each(fn) add(current.before, fn) end
function M.after_each(fn) add(current.after, fn) end
function M.setup(fn) add(current.setup, fn) end
function M.teardown(fn) add(current.teardown, fn) end

function M.finally(fn)
  assert(running, "finally used outside of a test")
  running.finally[#running.finally + 1] = fn
end

local function fullname(b, name)
  local parts = { name }
  while b and b.name do
    table.insert(parts, 1, b.name)
    b = b.parent
  end
  return table.concat(parts, " ")
end

local function message(err)
  if type(err) == "string" then return err end
  local mt = getmetatable(err)
  if mt and mt.__tostring then return tostring(err) end
  if type(err) == "table" and err.message ~= nil then return tostring(err.message) end
  return tostring(err)
end

local function report(status, name, err)
  print(("[%s] %s"):format(status, name))
  if err then
    for line in (message(err) .. "\n"):gmatch("(.-)\n") do
      print("    " .. line)
    end
  end
end

-- before_each hooks run outermost first; after_each innermost first.
local function hooks(b, field, outer_first)
  local chain = {}
  while b do
    table.insert(chain, outer_first and 1 or #chain + 1, b)
    b = b.parent
  end
  local out = {}
  for _, c in ipairs(chain) do
    for _, fn in ipairs(c[field]) do out[#out + 1] = fn end
  end
  return out
end

local function run_test(b, t)
  local name = fullname(b, t.name)
  if t.kind == "pending" or skip[name] then
    counts.pending = counts.pending + 1
    report(skip[name] and "skip" or "pending", name)
    if skip[name] then print("    " .. skip[name]) end
    return
  end
  local snapshot = luassert:snapshot()
  running = { finally = {} }
  local ok, err = true, nil
  for _, fn in ipairs(hooks(b, "before", true)) do
    if ok then ok, err = pcall(fn) end
  end
  if ok then ok, err = pcall(t.fn) end
  for _, fn in ipairs(hooks(b, "after", false)) do
    local ok2, err2 = pcall(fn)
    if ok and not ok2 then ok, err = ok2, err2 end
  end
  for _, fn in ipairs(running.finally) do
    local ok2, err2 = pcall(fn)
    if ok and not ok2 then ok, err = ok2, err2 end
  end
  running = nil
  snapshot:revert()
  if ok then
    counts.passed = counts.passed + 1
    report("ok", name)
  else
    counts.failed = counts.failed + 1
    report("FAIL", name, err)
  end
end

local function run_block(b, body)
  local saved = current
  current = b
  local ok, err = pcall(body)
  current = saved
  if not ok then
    counts.failed = counts.failed + 1
    report("FAIL", fullname(b.parent, b.name or b.label) .. " (while loading)", err)
    return
  end
  for _, fn in ipairs(b.setup) do
    ok, err = pcall(fn)
    if not ok then
      counts.failed = counts.failed + 1
      report("FAIL", fullname(b, "(setup)"), err)
      return
    end
  end
  for _, child in ipairs(b.children) do
    if child.kind == "describe" then
      run_block(block(child.name, b), child.fn)
    else
      run_test(b, child)
    end
  end
  for _, fn in ipairs(b.teardown) do
    ok, err = pcall(fn)
    if not ok then
      counts.failed = counts.failed + 1
      report("FAIL", fullname(b, "(teardown)"), err)
    end
  end
end

-- The globals busted gives a spec file.
M.context = M.describe
M.insulate = M.describe
M.expose = M.describe
M.lazy_setup, M.strict_setup = M.setup, M.setup
M.lazy_teardown, M.strict_teardown = M.teardown, M.teardown
M.assert, M.spy, M.stub, M.mock, M.match = luassert, spy, stub, mock, match
local GLOBALS = { "describe", "context", "insulate", "expose", "it", "pending",
  "before_each", "after_each", "setup", "teardown", "lazy_setup", "strict_setup",
  "lazy_teardown", "strict_teardown", "finally", "assert", "spy", "stub",
  "mock", "match" }

-- Runs each spec module (a name for require) as a top-level block.
-- options.skip: { [full test name] = reason } for tests not run, each
-- reported as skipped with its reason.
function M.run(modules, options)
  skip = options and options.skip or {}
  for _, g in ipairs(GLOBALS) do _G[g] = M[g] end
  for _, name in ipairs(modules) do
    local file = block(nil, nil)
    file.label = name
    run_block(file, function() require(name) end)
  end
  local summary = ("%d passed, %d failed, %d skipped"):format(
    counts.passed, counts.failed, counts.pending)
  print("spec: " .. summary)
  if counts.failed > 0 then error("spec: " .. summary, 0) end
end

return M
