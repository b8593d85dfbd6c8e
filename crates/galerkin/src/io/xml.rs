//! The little XML that VTK files need: attribute escaping for writing, and (tests only) a minimal
//! element parser so tests can read written files back without an XML dependency.

/// Escape a string for use inside a double-quoted XML attribute (field names come from users).
pub(crate) fn escape_attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
pub(crate) use parse::{parse, Element};

#[cfg(test)]
mod parse {
    use std::collections::BTreeMap;

    /// One element: name, attributes, direct text content and the names of its ancestors.
    #[derive(Debug, Clone)]
    pub(crate) struct Element {
        pub name: String,
        pub attrs: BTreeMap<String, String>,
        pub text: String,
        pub path: Vec<String>,
    }

    impl Element {
        pub fn attr(&self, key: &str) -> Option<&str> {
            self.attrs.get(key).map(String::as_str)
        }
    }

    fn unescape(s: &str) -> String {
        s.replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\"")
            .replace("&apos;", "'")
            .replace("&amp;", "&")
    }

    /// Parse a document into its elements in document order; `Err` names the first structural
    /// problem (unbalanced or mismatched tags, unterminated markup). No comments, CDATA or entities
    /// beyond the five predefined ones: enough for VTK files written by this crate.
    pub(crate) fn parse(doc: &str) -> Result<Vec<Element>, String> {
        let mut out: Vec<Element> = Vec::new();
        let mut stack: Vec<usize> = Vec::new();
        let mut rest = doc;
        while let Some(lt) = rest.find('<') {
            if let Some(&top) = stack.last() {
                out[top].text.push_str(&rest[..lt]);
            }
            rest = &rest[lt..];
            let gt = rest.find('>').ok_or("unterminated tag")?;
            let tag = &rest[1..gt];
            rest = &rest[gt + 1..];
            if tag.starts_with('?') {
                continue;
            }
            if let Some(name) = tag.strip_prefix('/') {
                let top = stack
                    .pop()
                    .ok_or(format!("closing </{name}> without opening"))?;
                if out[top].name != name.trim() {
                    return Err(format!("</{name}> closes <{}>", out[top].name));
                }
                continue;
            }
            let self_closing = tag.ends_with('/');
            let tag = tag.trim_end_matches('/');
            let (name, mut attrs_src) = tag.split_once(char::is_whitespace).unwrap_or((tag, ""));
            let mut attrs = BTreeMap::new();
            while let Some(eq) = attrs_src.find('=') {
                let key = attrs_src[..eq].trim().to_string();
                let after = attrs_src[eq + 1..].trim_start();
                let body = after
                    .strip_prefix('"')
                    .ok_or(format!("unquoted attribute {key}"))?;
                let end = body
                    .find('"')
                    .ok_or(format!("unterminated attribute {key}"))?;
                attrs.insert(key, unescape(&body[..end]));
                attrs_src = &body[end + 1..];
            }
            let path = stack.iter().map(|&i| out[i].name.clone()).collect();
            out.push(Element {
                name: name.to_string(),
                attrs,
                text: String::new(),
                path,
            });
            if !self_closing {
                stack.push(out.len() - 1);
            }
        }
        match stack.last() {
            Some(&top) => Err(format!("<{}> never closed", out[top].name)),
            None => Ok(out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaped_attribute_round_trips_through_parser() {
        let name = r#"a<b & "c" 'd'>"#;
        let doc = format!(
            r#"<?xml version="1.0"?><A k="{}"><B x="1"/>text</A>"#,
            escape_attr(name)
        );
        let els = parse(&doc).unwrap();
        assert_eq!(els.len(), 2);
        assert_eq!(els[0].attr("k"), Some(name));
        assert_eq!(els[0].text, "text");
        assert_eq!(els[1].path, vec!["A".to_string()]);
    }

    #[test]
    fn parser_rejects_unbalanced_documents() {
        assert!(parse("<A><B></A>").is_err());
        assert!(parse("<A>").is_err());
        assert!(parse("</A>").is_err());
    }
}
