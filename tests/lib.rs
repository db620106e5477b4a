//! End-to-end tests live in `all/`: one test binary with a module per area
//! (`cargo test -p moonbox-tests`). The library holds the runner for the
//! shared case list that every host of the component runs (`runtimes/`).

pub mod cases;
