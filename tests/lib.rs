//! End-to-end tests live in `all/`: one test binary with a module per area
//! (`cargo test -p moonbox-tests`). This library is empty.
