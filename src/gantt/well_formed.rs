//! A minimal XML well-formedness check for the SVG the crate writes (tests only).

/// A minimal XML well-formedness check: balanced and properly nested tags, one root,
/// well-formed attributes, and no stray `<` or unknown entity in text or values.
pub(crate) fn check_well_formed(xml: &str) -> Result<(), String> {
    fn check_text(text: &str) -> Result<(), String> {
        if text.contains('<') {
            return Err(format!("raw '<' in {text:?}"));
        }
        let mut rest = text;
        while let Some(i) = rest.find('&') {
            rest = &rest[i + 1..];
            let end = rest
                .find(';')
                .ok_or_else(|| format!("bad entity in {text:?}"))?;
            let entity = &rest[..end];
            let known = ["amp", "lt", "gt", "quot", "apos"].contains(&entity)
                || (entity.starts_with('#') && entity.len() > 1);
            if !known {
                return Err(format!("unknown entity &{entity}; in {text:?}"));
            }
        }
        Ok(())
    }

    let mut stack: Vec<&str> = Vec::new();
    let mut roots = 0;
    let mut rest = xml.trim();
    while !rest.is_empty() {
        let Some(open) = rest.find('<') else {
            if stack.is_empty() {
                return Err(format!("text after root: {rest:?}"));
            }
            return check_text(rest);
        };
        let text = &rest[..open];
        if stack.is_empty() && !text.trim().is_empty() {
            return Err(format!("text outside root: {text:?}"));
        }
        check_text(text)?;
        rest = &rest[open..];
        if let Some(after) = rest.strip_prefix("<!--") {
            let end = after.find("-->").ok_or("unterminated comment")?;
            rest = &after[end + 3..];
            continue;
        }
        if let Some(after) = rest.strip_prefix("<?") {
            let end = after.find("?>").ok_or("unterminated declaration")?;
            rest = &after[end + 2..];
            continue;
        }
        let close = rest.find('>').ok_or("unterminated tag")?;
        let tag = &rest[1..close];
        rest = &rest[close + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            match stack.pop() {
                Some(open) if open == name.trim() => {}
                other => return Err(format!("</{name}> closes {other:?}")),
            }
            continue;
        }
        let (body, self_closing) = match tag.strip_suffix('/') {
            Some(body) => (body, true),
            None => (tag, false),
        };
        let name_end = body.find(char::is_whitespace).unwrap_or(body.len());
        let name = &body[..name_end];
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_alphanumeric() || "-_:".contains(c))
        {
            return Err(format!("bad tag name in <{tag}>"));
        }
        let mut attrs = body[name_end..].trim();
        let mut seen = Vec::new();
        while !attrs.is_empty() {
            let eq = attrs
                .find('=')
                .ok_or_else(|| format!("bad attribute in <{tag}>"))?;
            let attr = attrs[..eq].trim();
            if attr.is_empty() || seen.contains(&attr) {
                return Err(format!("empty or duplicate attribute in <{tag}>"));
            }
            seen.push(attr);
            let value = attrs[eq + 1..].trim_start();
            let value = value
                .strip_prefix('"')
                .ok_or_else(|| format!("unquoted attribute in <{tag}>"))?;
            let end = value.find('"').ok_or("unterminated attribute")?;
            check_text(&value[..end])?;
            attrs = value[end + 1..].trim_start();
        }
        if stack.is_empty() {
            roots += 1;
        }
        if !self_closing {
            stack.push(name);
        }
    }
    if !stack.is_empty() {
        return Err(format!("unclosed: {stack:?}"));
    }
    if roots != 1 {
        return Err(format!("{roots} root elements"));
    }
    Ok(())
}
