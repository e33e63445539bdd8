//! The documents an archive and a bundle carry beside the binary: the README,
//! the user pages it sends a person to, and the licences.
//!
//! In the repository every link between pages is relative. Packed, a link to
//! a page that travels with the binary stays relative, so it opens the copy
//! beside it; a link to anything else (a contributor page, a source file)
//! becomes its address in the repository at this release's tag, so that no
//! link in an unpacked archive points at a file that is not there.
//! `tests/bundle/archives.py` checks every link of what was packed.

use std::path::{Component, Path};

use anyhow::Context;

use crate::release::Release;

/// The pages a person installing the server reads, as paths in the
/// repository and inside an archive alike.
pub const PAGES: [&str; 3] = ["README.md", "docs/setup.md", "docs/tools.md"];
/// The licence files, packed beside the binary in every archive, bundle,
/// wheel and npm package.
pub const LICENCES: [&str; 3] = ["LICENSE", "LICENSE-MIT", "LICENSE-APACHE"];

/// Each document as it is packed: its path inside the archive and its bytes.
pub fn read(root: &Path, release: &Release) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let tree = format!("{}/blob/v{}", release.repository.trim_end_matches('/'), release.version);
    let mut docs = Vec::new();
    for page in PAGES {
        let text = std::fs::read_to_string(root.join(page)).with_context(|| format!("cannot read {page}"))?;
        let packed = relink(&text, page, &|path| root.join(path).exists(), &tree)
            .map_err(|why| anyhow::anyhow!("{page}: {why}"))?;
        docs.push((page.to_string(), packed.into_bytes()));
    }
    for name in LICENCES {
        docs.push((
            name.to_string(),
            std::fs::read(root.join(name)).with_context(|| format!("cannot read {name}"))?,
        ));
    }
    Ok(docs)
}

/// `text` of the page at `page` with each relative link outside code made
/// to work beside the packed pages: kept when it points at one of them,
/// else pointed into `tree` (the repository at the release's tag). A link
/// to a path that `exists` says is not in the repository is refused: it is
/// broken in the repository too.
fn relink(text: &str, page: &str, exists: &dyn Fn(&str) -> bool, tree: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut fence: Option<&str> = None;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|marker| trimmed.starts_with(marker));
        match (fence, marker) {
            (None, Some(marker)) => {
                fence = Some(marker);
                out.push_str(line);
                continue;
            }
            (Some(open), Some(marker)) if open == marker => {
                fence = None;
                out.push_str(line);
                continue;
            }
            (Some(_), _) => {
                out.push_str(line);
                continue;
            }
            (None, None) => {}
        }
        let mut copied = 0;
        for (start, end) in targets(line) {
            out.push_str(&line[copied..start]);
            out.push_str(&packed_target(&line[start..end], page, exists, tree)?);
            copied = end;
        }
        out.push_str(&line[copied..]);
    }
    Ok(out)
}

/// Where the link targets of one line are, as byte ranges: an inline link's
/// `](target)` (a title after a space is left out) and a reference
/// definition's `[label]: target`; none inside a `code span`.
fn targets(line: &str) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let trimmed = line.trim_start();
    if trimmed.starts_with('[')
        && let Some(colon) = trimmed.find("]: ")
    {
        let start = line.len() - trimmed.len() + colon + 3;
        let end = line[start..].find(char::is_whitespace).map_or(line.len(), |at| start + at);
        found.push((start, end));
        return found;
    }
    for (at, _) in line.match_indices("](") {
        let in_code = line[..at].matches('`').count() % 2 == 1;
        if in_code {
            continue;
        }
        let start = at + 2;
        let end = line[start..].find([')', ' ']).map_or(line.len(), |offset| start + offset);
        found.push((start, end));
    }
    found
}

fn packed_target(
    target: &str,
    page: &str,
    exists: &dyn Fn(&str) -> bool,
    tree: &str,
) -> Result<String, String> {
    let absolute = target.starts_with('#') || target.contains("://") || target.starts_with("mailto:");
    if target.is_empty() || absolute {
        return Ok(target.to_string());
    }
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, format!("#{anchor}")),
        None => (target, String::new()),
    };
    let resolved = resolve(page, path).ok_or(format!("the link {target:?} leads out of the repository"))?;
    if PAGES.contains(&resolved.as_str()) {
        return Ok(target.to_string());
    }
    if !exists(&resolved) {
        return Err(format!("the link {target:?} names {resolved}, which is not in the repository"));
    }
    Ok(format!("{tree}/{resolved}{anchor}"))
}

/// `link` (relative, `/`-separated) from the page at `page`, as a path from
/// the repository's root; None when it climbs above the root.
fn resolve(page: &str, link: &str) -> Option<String> {
    let mut parts: Vec<String> = Vec::new();
    let base = Path::new(page).parent().unwrap_or(Path::new(""));
    for component in base.join(link).components() {
        match component {
            Component::Normal(part) => parts.push(part.to_str()?.to_string()),
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(parts.join("/")).filter(|path| !path.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    const TREE: &str = "https://github.com/ada/resmon-mcp/blob/v1.2.3";

    fn in_repository(path: &str) -> bool {
        ["docs/packaging.md", "docs/findability.md", "docs/setup.md", "src", "LICENSE"].contains(&path)
    }

    #[test]
    fn links_to_packed_pages_stay_and_the_others_point_at_the_release_tag() {
        let readme = "See [setup](docs/setup.md#prompts) and [packing](docs/packaging.md#releasing),\n\
                      [here](#install), [the web](https://example.org/a.md) and [code](src).\n";
        assert_eq!(
            relink(readme, "README.md", &in_repository, TREE).unwrap(),
            format!(
                "See [setup](docs/setup.md#prompts) and [packing]({TREE}/docs/packaging.md#releasing),\n\
                 [here](#install), [the web](https://example.org/a.md) and [code]({TREE}/src).\n"
            )
        );
        // From a page inside docs/, relative to that folder.
        let setup = "[figures](findability.md \"title\") and [back](../README.md)\n";
        assert_eq!(
            relink(setup, "docs/setup.md", &in_repository, TREE).unwrap(),
            format!("[figures]({TREE}/docs/findability.md \"title\") and [back](../README.md)\n")
        );
    }

    #[test]
    fn code_is_left_alone_and_reference_definitions_are_relinked() {
        let text = "```md\n[x](docs/packaging.md)\n```\n`[y](docs/packaging.md)` and\n\
                    [z]: docs/packaging.md\n";
        assert_eq!(
            relink(text, "README.md", &in_repository, TREE).unwrap(),
            format!(
                "```md\n[x](docs/packaging.md)\n```\n`[y](docs/packaging.md)` and\n[z]: {TREE}/docs/packaging.md\n"
            )
        );
    }

    #[test]
    fn a_link_broken_in_the_repository_is_refused() {
        let error = relink("[gone](docs/gone.md)\n", "README.md", &in_repository, TREE).unwrap_err();
        assert!(error.contains("docs/gone.md"), "{error}");
        assert!(relink("[up](../../x.md)\n", "docs/setup.md", &in_repository, TREE).is_err());
    }

    #[test]
    fn the_packed_pages_are_read_and_every_link_of_theirs_resolves() {
        let workspace = crate::workspace::load().unwrap();
        let release = crate::release::load(&workspace.root, &workspace.package).unwrap();
        let docs = read(&workspace.root, &release).unwrap();
        let names: Vec<&str> = docs.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, [PAGES.as_slice(), LICENCES.as_slice()].concat());
    }
}
