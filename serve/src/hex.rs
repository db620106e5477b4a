//! Lowercase hex: of key digests, and of the random bits of session and
//! worker ids.

use std::fmt::Write as _;

/// `bytes` as lowercase hex, two digits a byte.
pub(crate) fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// `N` random bytes from the system, as hex.
///
/// # Errors
/// The system's error when it has no random bytes to give.
pub(crate) fn random<const N: usize>() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes)?;
    Ok(hex(&bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_two_lowercase_digits_a_byte() {
        assert_eq!(hex(&[0x00, 0x0f, 0xab, 0xff]), "000fabff");
        assert_eq!(hex(&[]), "");
        let a = random::<16>().unwrap();
        assert_eq!(a.len(), 32);
        assert_ne!(a, random::<16>().unwrap());
    }
}
