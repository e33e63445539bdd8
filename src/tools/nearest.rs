//! The tool names nearest to a name that is none, for the `call`
//! subcommand's answer to a slip of the keyboard.

use super::TOOLS;

/// The tool names nearest to a name that is none, nearest first, at most
/// three: the one it is once case and `-` are set aside, else those sharing
/// a word with it (`routines` → `list_routines`), else those a few typing
/// slips away (a letter left out or swapped).
pub fn nearest_names(given: &str) -> Vec<&'static str> {
    let given = given.trim().to_ascii_lowercase().replace(['-', ' '], "_");
    if let Some(tool) = TOOLS.iter().find(|tool| tool.name == given) {
        return vec![tool.name];
    }
    let words =
        |name: &str| name.split('_').filter(|word| word.len() >= 3).map(str::to_string).collect::<Vec<_>>();
    let given_words = words(&given);
    let shares_word = |name: &str| {
        let stem = |word: &str| word.trim_end_matches('s').to_string();
        words(name).iter().any(|word| given_words.iter().any(|given| stem(given) == stem(word)))
    };
    let slips = given.chars().count().div_ceil(3).clamp(1, 4);
    let mut near: Vec<(usize, usize, &'static str)> = TOOLS
        .iter()
        .map(|tool| (tool.name, edit_distance(&given, tool.name)))
        .filter(|(name, distance)| *distance <= slips || shares_word(name))
        .map(|(name, distance)| (usize::from(distance > slips), distance, name))
        .collect();
    near.sort();
    near.into_iter().take(3).map(|(_, _, name)| name).collect()
}

/// Levenshtein distance: the fewest single-character insertions, deletions
/// and substitutions that turn one name into the other.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous + usize::from(ca != *cb);
            previous = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(row[j + 1] + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slip_a_plural_or_another_case_finds_the_tool() {
        assert_eq!(nearest_names("List-Routines"), ["list_routines"]);
        assert!(nearest_names("routine").contains(&"list_routines"), "{:?}", nearest_names("routine"));
        assert!(nearest_names("routines").contains(&"list_routines"), "{:?}", nearest_names("routines"));
        assert!(nearest_names("zzzzzzzzzzzz").is_empty());
        assert_eq!(edit_distance("health", "heatlh"), 2);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
