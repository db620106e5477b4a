//! The keys file: who may call the server, and each tenant's quota.
//!
//! ```json
//! {"tenants": [
//!   {"name": "acme", "key_sha256": "<64 hex digits>",
//!    "instructions_per_minute": 1000000000, "wall_ms_per_minute": 60000},
//!   {"name": "ops", "key_sha256": "<64 hex digits>", "metrics": true}
//! ]}
//! ```
//!
//! The file holds the SHA-256 digest of each key, never the key, so that a
//! leaked file opens nothing. A request's key (`Authorization: Bearer KEY`)
//! is hashed and looked up by digest; the lookup's timing can tell a caller
//! at most about a digest, from which no key can be found.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::error::Error;

/// The largest keys file read.
pub const MAX_KEYS_FILE_BYTES: u64 = 1 << 20;
/// The most tenants a keys file may hold.
pub const MAX_TENANTS: usize = 10_000;
/// The longest tenant name.
pub const MAX_TENANT_NAME: usize = 64;

/// The wall-time quota of a tenant whose entry sets none: one core's
/// minute per minute.
pub const DEFAULT_WALL_MS_PER_MINUTE: u64 = 60_000;

/// One tenant: a name (in logs, never the key) and its quota.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tenant {
    /// Letters, digits, `-`, `_` and `.`, at most [`MAX_TENANT_NAME`].
    pub name: String,
    /// The SHA-256 digest of the tenant's key, in hex.
    key_sha256: String,
    /// Lua instructions the tenant's evals may run per minute, summed over
    /// its evals; `None` for no quota.
    #[serde(default)]
    pub instructions_per_minute: Option<u64>,
    /// Milliseconds of eval wall time per minute, summed over the tenant's
    /// evals (so two evals at once count twice), and the time its request
    /// bodies took to arrive. Every tenant has one: left out of the file,
    /// it is [`DEFAULT_WALL_MS_PER_MINUTE`], since the instruction count
    /// misses work inside one C call (a backtracking pattern) and cannot
    /// bound CPU alone.
    #[serde(default)]
    pub wall_ms_per_minute: Option<u64>,
    /// Whether the tenant's key may read `/metrics`, which tells of every
    /// tenant's load: an operator's, not a customer's. Default `false`.
    #[serde(default)]
    pub metrics: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    tenants: Vec<Tenant>,
}

/// The tenants the server admits, found by the digest of their key.
#[derive(Clone, Debug, Default)]
pub struct Keys {
    tenants: Vec<Tenant>,
    by_digest: HashMap<[u8; 32], usize>,
}

impl Keys {
    /// Reads and checks a keys file.
    ///
    /// # Errors
    /// [`Error::Keys`] when the file cannot be read, is larger than
    /// [`MAX_KEYS_FILE_BYTES`], is not the JSON above, or holds a bad name
    /// or digest, a duplicate, a zero quota or no tenant.
    pub fn load(path: &Path) -> Result<Keys, Error> {
        let fail = |why: String| Error::Keys {
            path: path.to_owned(),
            why,
        };
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(MAX_KEYS_FILE_BYTES + 1).read_to_end(&mut bytes))
            .map_err(|e| fail(format!("cannot read it ({e})")))?;
        if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > MAX_KEYS_FILE_BYTES {
            return Err(fail(format!(
                "it is larger than {MAX_KEYS_FILE_BYTES} bytes"
            )));
        }
        Keys::parse(&bytes).map_err(fail)
    }

    /// Checks the JSON text of a keys file.
    ///
    /// ```
    /// let digest = moonbox_serve::Keys::digest_hex("a-long-random-key-for-acme");
    /// let text = format!(r#"{{"tenants": [{{"name": "acme", "key_sha256": "{digest}"}}]}}"#);
    /// let keys = moonbox_serve::Keys::parse(text.as_bytes())?;
    /// assert_eq!(keys.find("a-long-random-key-for-acme").map(|t| t.name.as_str()), Some("acme"));
    /// assert!(keys.find("another-key").is_none());
    /// # Ok::<(), String>(())
    /// ```
    ///
    /// # Errors
    /// What is wrong, naming the tenant.
    pub fn parse(bytes: &[u8]) -> Result<Keys, String> {
        let file: File = serde_json::from_slice(bytes).map_err(|e| {
            format!(
                "it is not a keys file ({e}); expected {{\"tenants\": [{{\"name\": ..., \"key_sha256\": ...}}]}}"
            )
        })?;
        if file.tenants.is_empty() {
            return Err("it lists no tenant, so no request could be admitted".to_owned());
        }
        if file.tenants.len() > MAX_TENANTS {
            return Err(format!(
                "it lists {} tenants, more than {MAX_TENANTS}",
                file.tenants.len()
            ));
        }
        let mut by_digest = HashMap::new();
        let mut names = std::collections::HashSet::new();
        for (i, tenant) in file.tenants.iter().enumerate() {
            let name = &tenant.name;
            let good_name = !name.is_empty()
                && name.len() <= MAX_TENANT_NAME
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
            if !good_name {
                return Err(format!(
                    "tenant {} has the name {name:?}; use 1 to {MAX_TENANT_NAME} letters, digits, '-', '_' or '.'",
                    i + 1
                ));
            }
            if !names.insert(name.clone()) {
                return Err(format!("the tenant name '{name}' appears twice"));
            }
            let digest = parse_digest(&tenant.key_sha256).ok_or_else(|| {
                format!(
                    "tenant '{name}': key_sha256 is not 64 hex digits (make it with: printf %s \"$KEY\" | sha256sum)"
                )
            })?;
            if by_digest.insert(digest, i).is_some() {
                return Err(format!(
                    "tenant '{name}' has the same key as another tenant"
                ));
            }
            for (what, quota) in [
                ("instructions_per_minute", tenant.instructions_per_minute),
                ("wall_ms_per_minute", tenant.wall_ms_per_minute),
            ] {
                if quota == Some(0) {
                    return Err(format!(
                        "tenant '{name}': {what} is 0, which admits nothing; remove the tenant or raise it"
                    ));
                }
            }
        }
        let mut tenants = file.tenants;
        for tenant in &mut tenants {
            tenant
                .wall_ms_per_minute
                .get_or_insert(DEFAULT_WALL_MS_PER_MINUTE);
        }
        Ok(Keys { tenants, by_digest })
    }

    /// The tenant whose key this is.
    pub fn find(&self, key: &str) -> Option<&Tenant> {
        let digest: [u8; 32] = Sha256::digest(key.as_bytes()).into();
        self.by_digest.get(&digest).map(|&i| &self.tenants[i])
    }

    /// The tenants, in file order.
    pub fn tenants(&self) -> &[Tenant] {
        &self.tenants
    }

    /// The hex SHA-256 digest of a key, as the keys file holds it.
    pub fn digest_hex(key: &str) -> String {
        crate::hex::hex(&Sha256::digest(key.as_bytes()))
    }
}

fn parse_digest(hex: &str) -> Option<[u8; 32]> {
    let hex = hex.as_bytes();
    if hex.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (byte, pair) in out.iter_mut().zip(hex.chunks_exact(2)) {
        let text = std::str::from_utf8(pair).ok()?;
        *byte = u8::from_str_radix(text, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(tenants: &str) -> Result<Keys, String> {
        Keys::parse(format!(r#"{{"tenants": [{tenants}]}}"#).as_bytes())
    }

    #[test]
    fn every_tenant_has_a_wall_time_quota_by_default() {
        let digest = Keys::digest_hex("k-0123456789abcdef");
        let keys = file(&format!(
            r#"{{"name": "a", "key_sha256": "{digest}"}},
               {{"name": "b", "key_sha256": "{}", "wall_ms_per_minute": 5}}"#,
            Keys::digest_hex("other-0123456789abcdef")
        ))
        .unwrap();
        assert_eq!(
            keys.tenants()[0].wall_ms_per_minute,
            Some(DEFAULT_WALL_MS_PER_MINUTE)
        );
        assert_eq!(keys.tenants()[0].instructions_per_minute, None);
        assert_eq!(keys.tenants()[1].wall_ms_per_minute, Some(5));
    }

    fn tenant(name: &str, key: &str) -> String {
        format!(
            r#"{{"name": "{name}", "key_sha256": "{}"}}"#,
            Keys::digest_hex(key)
        )
    }

    #[test]
    fn a_key_finds_its_tenant_and_no_other() {
        let keys = file(&format!(
            "{},{}",
            tenant("a", "key-a"),
            tenant("b", "key-b")
        ))
        .unwrap();
        assert_eq!(keys.find("key-a").unwrap().name, "a");
        assert_eq!(keys.find("key-b").unwrap().name, "b");
        assert!(keys.find("key-c").is_none());
        assert!(keys.find("").is_none());
    }

    #[test]
    fn bad_files_are_refused_with_the_reason() {
        let refused = |text: &str| Keys::parse(text.as_bytes()).unwrap_err();
        assert!(refused("not json").contains("not a keys file"));
        assert!(refused(r#"{"tenants": []}"#).contains("no tenant"));
        assert!(refused(r#"{"tenants": [], "extra": 1}"#).contains("unknown field"));
        let digest = Keys::digest_hex("k");
        let bad = |t: &str| file(t).unwrap_err();
        assert!(bad(r#"{"name": "a", "key_sha256": "abc"}"#).contains("64 hex"));
        assert!(
            bad(&format!(r#"{{"name": "a b", "key_sha256": "{digest}"}}"#)).contains("letters")
        );
        assert!(bad(&format!(r#"{{"name": "", "key_sha256": "{digest}"}}"#)).contains("letters"));
        assert!(bad(&format!("{},{}", tenant("a", "k"), tenant("a", "j"))).contains("twice"));
        assert!(bad(&format!("{},{}", tenant("a", "k"), tenant("b", "k"))).contains("same key"));
        assert!(
            bad(&format!(
                r#"{{"name": "a", "key_sha256": "{digest}", "wall_ms_per_minute": 0}}"#
            ))
            .contains("admits nothing")
        );
        assert!(bad(r#"{"name": "a", "key": "k"}"#).contains("unknown field"));
    }

    #[test]
    fn a_missing_or_huge_file_is_an_error_not_a_panic() {
        let dir = std::env::temp_dir().join(format!("moonbox-keys-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let missing = Keys::load(&dir.join("absent.json")).unwrap_err();
        assert!(missing.to_string().contains("cannot read it"), "{missing}");
        let huge = dir.join("huge.json");
        std::fs::write(&huge, vec![b' '; (MAX_KEYS_FILE_BYTES + 1) as usize]).unwrap();
        assert!(
            Keys::load(&huge)
                .unwrap_err()
                .to_string()
                .contains("larger than")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
