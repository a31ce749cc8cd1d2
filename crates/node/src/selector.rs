//! Label selectors as kubectl accepts them (`-l`): comma-separated requirements `key=value`,
//! `key==value`, `key!=value`, `key`, `!key`, `key in (a,b)`, `key notin (a,b)`
//! (`k8s.io/apimachinery/pkg/labels/selector.go`, `Parse`). Parsed into kube-rs's
//! `Selector`, which does the matching.

use std::collections::{BTreeMap, BTreeSet};

use kube::core::{Expression, Selector, SelectorExt as _};

/// A parsed selector with its source text, for messages.
#[derive(Debug, Clone)]
pub struct LabelSelector {
    text: String,
    selector: Selector,
}

impl LabelSelector {
    /// Parses `text`.
    ///
    /// # Errors
    /// A message naming the requirement that does not parse.
    pub fn parse(text: &str) -> Result<LabelSelector, String> {
        let mut exprs = Vec::new();
        for req in split_requirements(text)? {
            exprs.push(
                parse_requirement(req.trim())
                    .map_err(|e| format!("label selector {text:?}: {e}"))?,
            );
        }
        if exprs.is_empty() {
            return Err(format!("label selector {text:?} is empty"));
        }
        Ok(LabelSelector {
            text: text.to_string(),
            selector: exprs.into_iter().collect(),
        })
    }

    /// True when `labels` satisfy every requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.selector.matches(labels)
    }

    /// The selector as written.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// Splits on commas outside parentheses.
fn split_requirements(text: &str) -> Result<Vec<&str>, String> {
    let (mut depth, mut start, mut out) = (0i32, 0, Vec::new());
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        if !(0..=1).contains(&depth) {
            return Err(format!("label selector {text:?}: unbalanced parentheses"));
        }
    }
    if depth != 0 {
        return Err(format!("label selector {text:?}: unbalanced parentheses"));
    }
    out.push(&text[start..]);
    Ok(out.into_iter().filter(|r| !r.trim().is_empty()).collect())
}

fn parse_requirement(req: &str) -> Result<Expression, String> {
    let key_ok = |k: &str| {
        !k.is_empty()
            && k.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
    };
    let checked = |k: &str| -> Result<String, String> {
        if key_ok(k) {
            Ok(k.to_string())
        } else {
            Err(format!("invalid label key {k:?}"))
        }
    };
    if let Some(key) = req.strip_prefix('!') {
        return Ok(Expression::DoesNotExist(checked(key.trim())?));
    }
    for (op, neg) in [("!=", true), ("==", false), ("=", false)] {
        if let Some((k, v)) = req.split_once(op) {
            let (k, v) = (checked(k.trim())?, v.trim().to_string());
            return Ok(if neg {
                Expression::NotEqual(k, v)
            } else {
                Expression::Equal(k, v)
            });
        }
    }
    let words: Vec<&str> = req.splitn(2, char::is_whitespace).collect();
    if words.len() == 2 {
        let rest = words[1].trim();
        let (neg, list) = if let Some(l) = rest.strip_prefix("notin") {
            (true, l)
        } else if let Some(l) = rest.strip_prefix("in") {
            (false, l)
        } else {
            return Err(format!("cannot parse requirement {req:?}"));
        };
        let list = list.trim();
        let inner = list
            .strip_prefix('(')
            .and_then(|l| l.strip_suffix(')'))
            .ok_or_else(|| format!("expected a parenthesized value list in {req:?}"))?;
        let values: BTreeSet<String> = inner
            .split(',')
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .collect();
        let k = checked(words[0])?;
        return Ok(if neg {
            Expression::NotIn(k, values)
        } else {
            Expression::In(k, values)
        });
    }
    Ok(Expression::Exists(checked(req)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_matches_kubectl_selectors() {
        let labels = BTreeMap::from([
            ("app".to_string(), "web".to_string()),
            ("tier".to_string(), "frontend".to_string()),
        ]);
        let cases = [
            ("app=web", true),
            ("app==web", true),
            ("app!=web", false),
            ("app=db", false),
            ("tier", true),
            ("!tier", false),
            ("!canary", true),
            ("app in (web, db)", true),
            ("app notin (web,db)", false),
            ("app=web,tier=frontend", true),
            ("app=web,tier in (backend)", false),
            ("environment notin (prod)", true),
        ];
        for (text, want) in cases {
            let sel = LabelSelector::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(sel.matches(&labels), want, "{text}");
        }
        for bad in ["", "app in web", "app in (a", "a b c", "=x", "app in ((a))"] {
            assert!(
                LabelSelector::parse(bad).is_err(),
                "{bad:?} should not parse"
            );
        }
    }
}
