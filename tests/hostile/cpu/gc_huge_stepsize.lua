-- expect: runtime
-- A step size past what the collector's arithmetic holds on wasm32.
collectgarbage('incremental', 0, 0, 60)
