//! Engines: several in one process, each with its own settings; the cache
//! directory is reused across engines and refused when others could write
//! to it; and a failure keeps its cause.

use std::error::Error as _;

use moonbox::{Engine, Error, ErrorKind, Limits, Sandbox};
use serde_json::json;

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("moonbox-engines-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[tokio::test]
async fn engines_with_different_settings_coexist_in_one_process() {
    let pooled = Engine::builder().pooling_allocator(true).build().unwrap();
    let plain = Engine::builder().build().unwrap();
    assert!(pooled.is_pooling());
    assert!(!plain.is_pooling());
    assert!(!Engine::shared().unwrap().is_pooling());
    for engine in [&pooled, &plain] {
        let sandbox = Sandbox::builder().engine(engine).build().unwrap();
        assert!(sandbox.engine().is_pooling() == engine.is_pooling());
        let out = sandbox.eval("return 6 * 7").await.unwrap();
        assert_eq!(out.values, [json!(42)]);
    }
    // A sandbox without an engine uses the shared default, whatever other
    // engines exist.
    let default = Sandbox::builder().build().unwrap();
    assert!(!default.engine().is_pooling());
}

#[tokio::test]
async fn a_cache_directory_is_written_once_and_reused() {
    let dir = scratch("reuse");
    let first = Engine::builder().cache_dir(&dir).build().unwrap();
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].starts_with("moonbox-") && files[0].ends_with(".cwasm"));
    let second = Engine::builder().cache_dir(&dir).build().unwrap();
    for engine in [&first, &second] {
        let sandbox = Sandbox::builder().engine(engine).build().unwrap();
        assert_eq!(
            sandbox.eval("return 'ok'").await.unwrap().values,
            [json!("ok")]
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_corrupt_cache_file_is_recompiled_not_trusted() {
    let dir = scratch("corrupt");
    Engine::builder().cache_dir(&dir).build().unwrap();
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::write(&file, b"not compiled code").unwrap();
    let engine = Engine::builder().cache_dir(&dir).build().unwrap();
    let sandbox = Sandbox::builder().engine(&engine).build().unwrap();
    assert_eq!(sandbox.eval("return 1").await.unwrap().values, [json!(1)]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(unix)]
#[test]
fn a_cache_directory_others_can_write_is_refused_with_its_cause() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("open");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o775)).unwrap();
    let err = Engine::builder().cache_dir(&dir).build().unwrap_err();
    let Error::Cache { path, source } = &err else {
        panic!("expected a cache error, got {err:?}");
    };
    assert_eq!(path, &dir);
    assert_eq!(source.kind(), std::io::ErrorKind::PermissionDenied);
    assert!(err.source().is_some());
    assert!(
        err.to_string().contains("as the compiled-code cache"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn configuration_errors_are_typed_and_name_the_setting() {
    let err = Sandbox::builder()
        .limits(Limits {
            max_memory_bytes: 1,
            ..Limits::default()
        })
        .build()
        .unwrap_err();
    let Error::Config(why) = &err else {
        panic!("expected a configuration error, got {err:?}");
    };
    assert!(why.contains("max_memory_bytes"), "{why}");
    assert!(err.eval_error().is_none());
}

#[test]
fn a_limit_too_small_to_start_is_a_configuration_error() {
    let err = Sandbox::builder()
        .limits(Limits {
            fuel: 1,
            ..Limits::default()
        })
        .build()
        .unwrap_err();
    let Error::Config(why) = &err else {
        panic!("expected a configuration error, got {err:?}");
    };
    assert!(
        why.contains("limit fuel (1) is too small to start a session"),
        "{why}"
    );
}

#[tokio::test]
async fn a_session_that_cannot_start_keeps_the_eval_error_that_stopped_it() {
    // A pooling engine has a fixed number of instance slots: once live
    // sessions hold them all, the next session cannot start.
    let engine = Engine::builder().pooling_allocator(true).build().unwrap();
    let sandbox = Sandbox::builder().engine(&engine).build().unwrap();
    let mut live = Vec::new();
    let err = loop {
        match sandbox.session(()).await {
            Ok(session) => live.push(session),
            Err(e) => break e,
        }
        assert!(live.len() <= 1000, "the pool never filled");
    };
    assert!(!live.is_empty());
    let Error::Session(stop) = &err else {
        panic!("expected a session error, got {err:?}");
    };
    assert_eq!(stop.kind, ErrorKind::Internal);
    assert_eq!(err.eval_error().map(|e| e.kind), Some(ErrorKind::Internal));
    assert_eq!(err.to_string(), "cannot start a session");
    let source = err.source().expect("the eval error is the source");
    assert!(
        source.to_string().starts_with("error[internal]"),
        "{source}"
    );
    // Freeing a slot lets the next session start.
    live.pop();
    sandbox.session(()).await.unwrap();
}
