//! The general-English lexicon discovery expands query words with:
//! `cargo xtask lexicon` writes `crates/core/src/discovery/lexicon.txt`
//! from WordNet 3.0 (Debian's `wordnet-base`, installed with apt-get when
//! missing). The file is committed; this command reproduces it.
//!
//! What it keeps: for every common English word, the other words of its
//! (at most two) most frequent senses and the words WordNet derives from
//! them ("error" → "mistake", "decide" → "decision", "determine").
//! "Common" means seen at least `MIN_COUNT` times in the sense-tagged
//! corpus WordNet counts its senses in (`cntlist.rev`), for the word and
//! for each relative alike; senses the corpus never saw are left out. This
//! keeps the words people use in requests and drops rare ones, which bring
//! more wrong relatives than right ones and would make the table large.
//!
//! One line per word: the word, then its relatives, space-separated.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use crate::util::{Failure, repo_root};

/// Where Debian's `wordnet-base` puts the database.
const WORDNET: &str = "/usr/share/wordnet";
const COPYRIGHT: &str = "/usr/share/doc/wordnet-base/copyright";

/// How many of a word's most frequent senses are kept.
const SENSES: usize = 2;

/// How often the sense-tagged corpus must have seen a word (any sense)
/// for it to be kept.
const MIN_COUNT: u32 = 20;

const POS: [(&str, char); 4] = [("noun", 'n'), ("verb", 'v'), ("adj", 'a'), ("adv", 'r')];

pub fn out_path() -> PathBuf {
    repo_root().join("crates/core/src/discovery/lexicon.txt")
}

/// A word the lexicon keeps: lowercase ASCII letters only, three or more.
fn plain(word: &str) -> bool {
    word.len() >= 3 && word.bytes().all(|b| b.is_ascii_lowercase())
}

/// A synset as `data.<pos>` holds it: its words, and the words its
/// derivation pointers (`+`) lead to, as (part of speech, offset, word
/// number) to be resolved once every file is read.
struct Synset {
    words: Vec<String>,
    derived: Vec<(char, String, usize)>,
}

fn read(dir: &Path, name: &str) -> Result<String, Failure> {
    let path = dir.join(name);
    let bytes =
        std::fs::read(&path).map_err(|e| Failure::new(format!("{}: {e}", path.display())))?;
    // The database is Latin-1 in places; every word kept is ASCII.
    Ok(bytes.iter().map(|&b| b as char).collect())
}

fn parse_data(text: &str) -> Result<HashMap<String, Synset>, Failure> {
    let mut out = HashMap::new();
    for line in text.lines().filter(|l| !l.starts_with("  ")) {
        let head = line.split(" | ").next().unwrap_or_default();
        let f: Vec<&str> = head.split_whitespace().collect();
        let bad = || Failure::new(format!("unreadable WordNet data line: {line:.60}"));
        let count = usize::from_str_radix(f.get(3).ok_or_else(bad)?, 16).map_err(|_| bad())?;
        let mut words = Vec::with_capacity(count);
        for i in 0..count {
            let w = f.get(4 + 2 * i).ok_or_else(bad)?.to_ascii_lowercase();
            // Adjectives may carry a syntactic marker: "galore(ip)".
            let w = w.split('(').next().unwrap_or_default().to_string();
            words.push(w);
        }
        let at = 4 + 2 * count;
        let pointers: usize = f.get(at).ok_or_else(bad)?.parse().map_err(|_| bad())?;
        let mut derived = Vec::new();
        for j in 0..pointers {
            let p = &f.get(at + 1 + 4 * j..at + 5 + 4 * j).ok_or_else(bad)?;
            if p[0] != "+" {
                continue;
            }
            let target = usize::from_str_radix(&p[3][2..], 16).map_err(|_| bad())?;
            let pos = match p[2] {
                "s" => 'a',
                other => other.chars().next().ok_or_else(bad)?,
            };
            derived.push((pos, p[1].to_string(), target));
        }
        out.insert(f[0].to_string(), Synset { words, derived });
    }
    Ok(out)
}

/// The lexicon's text, from the WordNet database in `dir`.
pub fn generate(dir: &Path) -> Result<String, Failure> {
    let mut data: HashMap<char, HashMap<String, Synset>> = HashMap::new();
    for (name, pos) in POS {
        data.insert(pos, parse_data(&read(dir, &format!("data.{name}"))?)?);
    }
    // How often the tagged corpus saw each word, over all its senses
    // ("lemma%sense-key sense-number count" per line).
    let mut count: HashMap<String, u32> = HashMap::new();
    for line in read(dir, "cntlist.rev")?.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (Some(key), Some(n)) = (f.first(), f.get(2).and_then(|n| n.parse::<u32>().ok())) else {
            return Err(Failure::new(format!("unreadable cntlist line: {line:.60}")));
        };
        let lemma = key.split('%').next().unwrap_or_default();
        *count.entry(lemma.to_string()).or_default() += n;
    }
    let common = |w: &str| plain(w) && count.get(w).is_some_and(|&n| n >= MIN_COUNT);
    let mut relatives: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (name, pos) in POS {
        for line in read(dir, &format!("index.{name}"))?.lines() {
            if line.starts_with("  ") {
                continue;
            }
            let f: Vec<&str> = line.split_whitespace().collect();
            let bad = || Failure::new(format!("unreadable WordNet index line: {line:.60}"));
            let lemma = *f.first().ok_or_else(bad)?;
            if !common(lemma) {
                continue;
            }
            let pointers: usize = f.get(3).ok_or_else(bad)?.parse().map_err(|_| bad())?;
            let tagged: usize = f
                .get(5 + pointers)
                .ok_or_else(bad)?
                .parse()
                .map_err(|_| bad())?;
            let offsets = f.get(6 + pointers..).ok_or_else(bad)?;
            for off in offsets.iter().take(SENSES.min(tagged)) {
                let synset = data[&pos].get(*off).ok_or_else(|| {
                    Failure::new(format!("WordNet index names a missing synset {off}"))
                })?;
                let mut found: Vec<&String> = synset.words.iter().collect();
                for (p, o, n) in &synset.derived {
                    if let Some(w) = data[p].get(o).and_then(|s| s.words.get(n.wrapping_sub(1))) {
                        found.push(w);
                    }
                }
                for w in found {
                    if w != lemma && common(w) {
                        relatives
                            .entry(lemma.to_string())
                            .or_default()
                            .insert(w.clone());
                    }
                }
            }
        }
    }
    let mut out = String::from(
        "# General-English relatives for discovery's query expansion, derived\n\
         # from WordNet 3.0 by `cargo xtask lexicon`; do not edit by hand.\n\
         # Each line: a word, then its relatives. WordNet's licence, which\n\
         # asks that it appear on every copy:\n#\n",
    );
    for line in licence()?.lines() {
        out.push_str(format!("# {line}").trim_end());
        out.push('\n');
    }
    for (word, rel) in relatives {
        out.push_str(&word);
        for r in rel {
            out.push(' ');
            out.push_str(&r);
        }
        out.push('\n');
    }
    Ok(out)
}

/// WordNet's licence as the Debian package states it: the paragraphs
/// after `License: WordNet3.0` in its copyright file.
fn licence() -> Result<String, Failure> {
    let path = Path::new(COPYRIGHT);
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::new(format!("{}: {e}", path.display())))?;
    let mut lines = text
        .lines()
        .skip_while(|l| l.trim() != "License: WordNet3.0");
    if lines.next().is_none() {
        return Err(Failure::new(format!(
            "{}: no WordNet licence",
            path.display()
        )));
    }
    let mut out = String::new();
    for line in lines.take_while(|l| l.starts_with(' ')) {
        let line = line.trim();
        out.push_str(if line == "." { "" } else { line });
        out.push('\n');
    }
    Ok(out)
}

/// Installs WordNet when missing and writes the lexicon file.
pub fn write() -> Result<(), Failure> {
    let dir = Path::new(WORDNET);
    if !dir.join("data.noun").is_file() || !Path::new(COPYRIGHT).is_file() {
        crate::setup::apt_install(&["wordnet-base"])?;
    }
    let text = generate(dir)?;
    let out = out_path();
    std::fs::write(&out, &text).map_err(|e| Failure::new(format!("{}: {e}", out.display())))?;
    println!(
        "  {} lines, {} bytes written to {}",
        text.lines().count(),
        text.len(),
        out.display()
    );
    Ok(())
}
