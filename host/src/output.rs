//! The script's output as the host receives it: a bounded byte buffer per
//! eval, and an optional sink that sees each write as it happens.

use std::sync::Arc;

/// A function that receives the script's output while the eval runs, one
/// write at a time (a `print` arrives as its pieces: arguments, tabs and the
/// newline). It runs on the eval's thread, between two steps of the script:
/// keep it short (forward to a channel or a buffered writer).
///
/// ```
/// use std::sync::{Arc, Mutex};
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let sink = seen.clone();
/// let sandbox = moonbox::Sandbox::builder().build()?;
/// let mut session = sandbox.session(()).await?;
/// session.set_output_sink(Some(Arc::new(move |bytes: &[u8]| {
///     sink.lock().unwrap().extend_from_slice(bytes);
/// })));
/// session.eval("io.write('a', 'b') print('c')").await?;
/// assert_eq!(&*seen.lock().unwrap(), b"abc\n");
/// # Ok(()) }
/// # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
/// ```
pub type OutputSink = Arc<dyn Fn(&[u8]) + Send + Sync>;

/// What one eval has written so far. The guest never writes past
/// `max-output-bytes`; the buffer keeps at most that many bytes anyway, so
/// a misbehaving guest cannot grow the host.
pub(crate) struct OutputBuffer {
    bytes: Vec<u8>,
    cap: usize,
    pub(crate) sink: Option<OutputSink>,
}

impl OutputBuffer {
    pub(crate) fn new(cap: u64) -> Self {
        OutputBuffer {
            bytes: Vec::new(),
            cap: usize::try_from(cap).unwrap_or(usize::MAX),
            sink: None,
        }
    }

    /// Appends what fits and forwards it to the sink.
    pub(crate) fn write(&mut self, bytes: &[u8]) {
        let room = self.cap.saturating_sub(self.bytes.len());
        let kept = &bytes[..bytes.len().min(room)];
        if kept.is_empty() {
            return;
        }
        self.bytes.extend_from_slice(kept);
        if let Some(sink) = &self.sink {
            sink(kept);
        }
    }

    /// Takes what was written, leaving the buffer empty for the next eval.
    pub(crate) fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[test]
    fn keeps_at_most_its_cap_and_forwards_only_what_it_keeps() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let mut buffer = OutputBuffer::new(5);
        buffer.sink = Some(Arc::new(move |b: &[u8]| {
            sink.lock().unwrap().extend_from_slice(b)
        }));
        buffer.write(b"abc");
        buffer.write(b"defg");
        buffer.write(b"h");
        assert_eq!(buffer.take(), b"abcde");
        assert_eq!(&*seen.lock().unwrap(), b"abcde");
        assert!(buffer.take().is_empty());
    }
}
