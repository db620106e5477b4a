//! `moonbox probe URL`: a health check for images that hold nothing but
//! the `moonbox` binary (no shell, no curl), such as the release's
//! container image, whose `HEALTHCHECK` runs
//! `moonbox probe http://127.0.0.1:8080/readyz`.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

/// The most bytes of the answer read: its status line is all that counts.
const MAX_ANSWER_BYTES: u64 = 1024;

/// A `http://HOST[:PORT]/PATH` URL, split. Only plain HTTP: a probe runs
/// beside the server, on loopback or the pod's address.
#[derive(Debug, PartialEq, Eq)]
struct Target {
    host: String,
    port: u16,
    path: String,
}

fn parse(url: &str) -> Result<Target> {
    let Some(rest) = url.strip_prefix("http://") else {
        bail!("'{url}' is not an http:// URL (a probe speaks plain HTTP to a server beside it)");
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    if authority.is_empty() || authority.contains('@') {
        bail!("'{url}' has no host (or has credentials, which a probe does not send)");
    }
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if !host.ends_with(']') || authority.starts_with('[') => {
            let port = port
                .parse()
                .with_context(|| format!("'{port}' in '{url}' is not a port"))?;
            (host, port)
        }
        _ => (authority, 80),
    };
    if path.chars().any(|c| c.is_control() || c == ' ') {
        bail!("the path in '{url}' has a space or a control character");
    }
    Ok(Target {
        host: host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned(),
        port,
        path: path.to_owned(),
    })
}

/// GETs the URL within `timeout`: 0 for a 2xx answer, 1 for any other
/// answer or none (with the reason on stderr).
pub(crate) fn probe(url: &str, timeout: Duration) -> Result<u8> {
    let target = parse(url)?;
    let deadline = Instant::now() + timeout;
    let answer = ask(&target, deadline).and_then(|status| {
        if (200..300).contains(&status) {
            Ok(status)
        } else {
            bail!("answered {status}")
        }
    });
    match answer {
        Ok(status) => {
            println!("{url}: {status}");
            Ok(0)
        }
        Err(e) => {
            eprintln!("moonbox probe: {url}: {e:#}");
            Ok(1)
        }
    }
}

fn left(deadline: Instant) -> Result<Duration> {
    match deadline.checked_duration_since(Instant::now()) {
        Some(d) if !d.is_zero() => Ok(d),
        _ => bail!("no answer within the timeout"),
    }
}

fn ask(target: &Target, deadline: Instant) -> Result<u16> {
    let addrs = (target.host.as_str(), target.port)
        .to_socket_addrs()
        .with_context(|| format!("cannot resolve '{}'", target.host))?;
    let mut last = None;
    let mut stream = None;
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, left(deadline)?) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = Some(e),
        }
    }
    let Some(mut stream) = stream else {
        return Err(match last {
            Some(e) => anyhow::Error::new(e).context("cannot connect"),
            None => anyhow::anyhow!("'{}' has no address", target.host),
        });
    };
    stream.set_write_timeout(Some(left(deadline)?))?;
    let host = if target.host.contains(':') {
        format!("[{}]:{}", target.host, target.port)
    } else {
        format!("{}:{}", target.host, target.port)
    };
    // One write: `write!` on the stream would send each piece of the
    // format as a segment of its own.
    let request = format!(
        "GET {} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: moonbox-probe\r\nConnection: close\r\n\r\n",
        target.path
    );
    stream
        .write_all(request.as_bytes())
        .context("cannot send the request")?;
    let mut answer = Vec::new();
    let mut reader = stream.take(MAX_ANSWER_BYTES);
    loop {
        reader.get_mut().set_read_timeout(Some(left(deadline)?))?;
        let mut chunk = [0u8; 256];
        let n = reader.read(&mut chunk).context("cannot read the answer")?;
        answer.extend_from_slice(&chunk[..n]);
        if n == 0 || answer.contains(&b'\n') {
            break;
        }
    }
    status(&answer)
}

/// The status code of an HTTP/1.x status line.
fn status(answer: &[u8]) -> Result<u16> {
    let line = answer.split(|&b| b == b'\n').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let mut words = line.split_whitespace();
    match (words.next(), words.next().map(str::parse::<u16>)) {
        (Some(version), Some(Ok(code))) if version.starts_with("HTTP/1.") => Ok(code),
        _ => bail!(
            "the answer is not HTTP: {:?}",
            line.chars().take(80).collect::<String>()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_host_port_and_path() {
        let t = parse("http://127.0.0.1:8080/readyz").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.path.as_str()),
            ("127.0.0.1", 8080, "/readyz")
        );
        let t = parse("http://localhost").unwrap();
        assert_eq!((t.port, t.path.as_str()), (80, "/"));
        let t = parse("http://[::1]:9/healthz").unwrap();
        assert_eq!((t.host.as_str(), t.port), ("::1", 9));
        for bad in [
            "https://x/",
            "ftp://x",
            "http:///x",
            "http://u:p@x/",
            "http://x:port/",
            "http://x/a b",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn only_an_http_status_line_counts() {
        assert_eq!(status(b"HTTP/1.1 200 OK\r\n").unwrap(), 200);
        assert_eq!(
            status(b"HTTP/1.0 503 Service Unavailable\r\n").unwrap(),
            503
        );
        assert!(status(b"SSH-2.0-OpenSSH\r\n").is_err());
        assert!(status(b"").is_err());
    }

    #[test]
    fn a_probe_answers_0_for_2xx_and_1_otherwise() {
        use std::net::TcpListener;
        for (answer, code) in [
            ("HTTP/1.1 200 OK\r\n\r\n", 0),
            ("HTTP/1.1 503 Busy\r\n\r\n", 1),
        ] {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            let port = listener.local_addr().unwrap().port();
            let server = std::thread::spawn(move || {
                let (mut s, _) = listener.accept().unwrap();
                // The whole request head, however it is segmented.
                let mut request = Vec::new();
                let mut byte = [0u8; 1];
                while !request.ends_with(b"\r\n\r\n") && s.read(&mut byte).unwrap() == 1 {
                    request.push(byte[0]);
                }
                assert!(request.starts_with(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1:"));
                s.write_all(answer.as_bytes()).unwrap();
            });
            let url = format!("http://127.0.0.1:{port}/readyz");
            assert_eq!(
                probe(&url, Duration::from_secs(5)).unwrap(),
                code,
                "{answer}"
            );
            server.join().unwrap();
        }
        // Nothing listening: 1, not an error of the command.
        let closed = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        assert_eq!(
            probe(
                &format!("http://127.0.0.1:{closed}/"),
                Duration::from_secs(2)
            )
            .unwrap(),
            1
        );
    }
}
