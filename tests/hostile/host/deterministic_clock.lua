-- expect: ok
-- In deterministic mode the clock and random are fixed.
return os.time(), os.date('!%Y-%m-%d'), math.random(1, 10)
