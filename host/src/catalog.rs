//! Discovery: a sandbox's host functions found from Lua, for sandboxes
//! with more of them than a tool description should list
//! ([`SandboxBuilder::discovery`](crate::SandboxBuilder::discovery)).
//!
//! Two capabilities search the others: `catalog.search(words)` returns the
//! best matches as `{name, summary}` and `catalog.describe(name)` one
//! function's signature, description and schemas. The tool description
//! ([`crate::tool::description`]) then lists namespaces and counts instead
//! of every function once the list would pass [`LISTING_BYTES`].

use std::sync::Arc;

use serde_json::{Value, json};

use crate::capability::{Capability, CapabilityError};

/// The namespace of the discovery functions.
pub const NAMESPACE: &str = "catalog";

/// The most bytes of the description's list of host functions; past it,
/// a sandbox with discovery lists namespaces instead.
pub const LISTING_BYTES: usize = 2048;

/// The most matches `catalog.search` returns.
pub const MAX_MATCHES: usize = 20;

/// The longest summary `catalog.search` gives, in characters.
const SUMMARY_CHARS: usize = 120;

/// What discovery knows of one host function.
struct Entry {
    name: String,
    signature: String,
    description: String,
    params: Option<Vec<Value>>,
    result: Option<Value>,
    /// Lowercase name and description, for matching.
    haystack: (String, String),
}

/// The two discovery capabilities over `capabilities` (the sandbox's
/// others).
pub(crate) fn capabilities<T: Send + Sync + 'static>(
    capabilities: &[Capability<T>],
) -> [Capability<T>; 2] {
    let entries: Arc<Vec<Entry>> = Arc::new(
        capabilities
            .iter()
            .map(|c| Entry {
                name: c.name().to_owned(),
                signature: c.signature(),
                description: c.description().to_owned(),
                params: c.params_schemas().map(<[Value]>::to_vec),
                result: c.result_schema().cloned(),
                haystack: (c.name().to_lowercase(), c.description().to_lowercase()),
            })
            .collect(),
    );
    let all = entries.clone();
    let search = Capability::sync(
        format!("{NAMESPACE}.search"),
        move |_: &T, (words,): (String,)| -> Result<Value, CapabilityError> {
            Ok(search(&all, &words))
        },
    )
    .with_description(format!(
        "the host functions whose name or description has these words, best first (at most \
         {MAX_MATCHES}), as {{name, summary}}; an empty string lists them all in order"
    ))
    .arg_names(["words"])
    .schemas(
        vec![json!({"type": "string"})],
        Some(json!({
            "type": "array",
            "items": {
                "type": "object",
                "properties": { "name": {"type": "string"}, "summary": {"type": "string"} }
            }
        })),
    );
    let describe = Capability::sync(
        format!("{NAMESPACE}.describe"),
        move |_: &T, (name,): (String,)| describe(&entries, &name),
    )
    .with_description(
        "one host function's Lua signature, description, and the JSON Schemas of its \
         arguments and result",
    )
    .arg_names(["name"])
    .schemas(
        vec![json!({"type": "string"})],
        Some(json!({"type": "object"})),
    );
    [search, describe]
}

/// The entries matching `words`, best first.
fn search(entries: &[Entry], words: &str) -> Value {
    let words: Vec<String> = words
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let mut scored: Vec<(usize, usize)> = entries
        .iter()
        .enumerate()
        .filter_map(|(i, entry)| {
            let score: usize = words
                .iter()
                .map(|w| {
                    2 * usize::from(entry.haystack.0.contains(w.as_str()))
                        + usize::from(entry.haystack.1.contains(w.as_str()))
                })
                .sum();
            (words.is_empty() || score > 0).then_some((score, i))
        })
        .collect();
    // Best first; the catalogue's own order among equals.
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let limit = if words.is_empty() {
        entries.len()
    } else {
        MAX_MATCHES
    };
    Value::Array(
        scored
            .into_iter()
            .take(limit)
            .map(|(_, i)| {
                let entry = &entries[i];
                json!({ "name": entry.name, "summary": summary(&entry.description) })
            })
            .collect(),
    )
}

/// One entry in full, or an error naming the closest names.
fn describe(entries: &[Entry], name: &str) -> Result<Value, CapabilityError> {
    match entries.iter().find(|e| e.name == name) {
        Some(entry) => Ok(json!({
            "name": entry.name,
            "signature": entry.signature,
            "description": entry.description,
            "params": entry.params,
            "result": entry.result,
        })),
        None => Err(CapabilityError::new(format!(
            "no host function is named '{}'; catalog.search(words) finds them",
            name.chars().take(64).collect::<String>()
        ))),
    }
}

/// A description's first sentence or line, bounded.
fn summary(description: &str) -> String {
    let line = description.lines().next().unwrap_or_default().trim();
    let first = match line.find(". ") {
        Some(at) => &line[..at],
        None => line.strip_suffix('.').unwrap_or(line),
    };
    if first.chars().count() <= SUMMARY_CHARS {
        return first.to_owned();
    }
    let mut cut: String = first.chars().take(SUMMARY_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// The namespaces of `names` (the part before the first `.`, or the whole
/// name), with how many functions each has, in order of first appearance.
pub(crate) fn namespaces<'a>(names: impl Iterator<Item = &'a str>) -> Vec<(String, usize)> {
    let mut out: Vec<(String, usize)> = Vec::new();
    for name in names {
        let space = name.split('.').next().unwrap_or(name);
        match out.iter_mut().find(|(s, _)| s == space) {
            Some((_, n)) => *n += 1,
            None => out.push((space.to_owned(), 1)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, description: &str) -> Entry {
        Entry {
            name: name.to_owned(),
            signature: format!("{name}()"),
            description: description.to_owned(),
            params: None,
            result: None,
            haystack: (name.to_lowercase(), description.to_lowercase()),
        }
    }

    #[test]
    fn search_ranks_names_over_descriptions_and_keeps_the_order_of_equals() {
        let entries = [
            entry("gh.list_issues", "List the issues of a repository."),
            entry("gh.create_issue", "Open an issue."),
            entry("gh.get_repo", "A repository, with its open issue count."),
            entry("jira.search", "Find tickets."),
        ];
        let names = |v: Value| -> Vec<String> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|m| m["name"].as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(
            names(search(&entries, "Issue")),
            ["gh.list_issues", "gh.create_issue", "gh.get_repo"]
        );
        assert_eq!(
            names(search(&entries, "create issue")),
            ["gh.create_issue", "gh.list_issues", "gh.get_repo"]
        );
        assert_eq!(names(search(&entries, "zebra")), Vec::<String>::new());
        assert_eq!(
            names(search(&entries, "")).len(),
            4,
            "an empty query lists all"
        );
        assert_eq!(search(&entries, "tickets")[0]["summary"], "Find tickets");
    }

    #[test]
    fn describe_names_the_way_to_search_when_a_name_is_unknown() {
        let entries = [entry("gh.get_repo", "A repository.")];
        assert_eq!(
            describe(&entries, "gh.get_repo").unwrap()["signature"],
            "gh.get_repo()"
        );
        let e = describe(&entries, "gh.nope").unwrap_err();
        assert_eq!(
            e.message(),
            "no host function is named 'gh.nope'; catalog.search(words) finds them"
        );
    }

    #[test]
    fn summaries_are_a_first_sentence_within_bounds() {
        assert_eq!(summary("First. Second."), "First");
        assert_eq!(summary("line one\nline two"), "line one");
        assert_eq!(summary("Uses v1.2 of the API."), "Uses v1.2 of the API");
        let long = "x".repeat(500);
        assert_eq!(summary(&long).chars().count(), SUMMARY_CHARS);
    }

    #[test]
    fn namespaces_count_in_order_of_appearance() {
        let names = ["gh.a", "jira.b", "gh.c", "plain"];
        assert_eq!(
            namespaces(names.into_iter()),
            [
                ("gh".to_owned(), 2),
                ("jira".to_owned(), 1),
                ("plain".to_owned(), 1)
            ]
        );
    }
}
