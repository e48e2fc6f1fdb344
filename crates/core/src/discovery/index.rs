//! The discovery index: BM25F over the fields of every entry (the
//! registry's skills and the enabled Agent Skills packages, ranked
//! together), kept up to date as entries come and go, with typo, prefix,
//! compound, synonym and general-English (lexicon) expansion of query
//! words.
//!
//! Scoring, per query word `q` and skill `d`:
//! `score(q, d) = max over expansions (t, w) of w · idf(t) · tf̃ / (k1 + tf̃)`
//! where `tf̃ = Σ_fields weight_f · tf_f / (1 − b_f + b_f · len_f / avglen_f)`.
//! An entry's score is the sum over the query's words. Statistics (N, df,
//! average field lengths) are live, so updates never need a rebuild, and
//! removing an entry touches only its own postings (each entry remembers
//! where in each posting list it sits).

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use serde_json::Value;

use super::normalize::{
    bounded_distance, hyphen_joins, is_noise, is_stop_word, lexicon, stem, synonyms,
    thesaurus_words, words,
};
use crate::skill::permission::PermissionSettings;
use crate::skill::{Category, SkillDefinition, SkillId, Tier};

/// A fast, non-cryptographic hasher for the index's own keys (terms,
/// words, ids); skill text is local, so flooding is not a concern.
#[derive(Clone, Copy, Default)]
struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        for chunk in bytes.chunks(8) {
            let mut buf = [0u8; 8];
            buf[..chunk.len()].copy_from_slice(chunk);
            self.0 = (self.0.rotate_left(5) ^ u64::from_le_bytes(buf)).wrapping_mul(K);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type Map<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

/// The fields of an entry that discovery reads, in index order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Id,
    Name,
    /// A skill's tags; a package's metadata keywords.
    Tags,
    Description,
    Examples,
    /// Parameter names, their descriptions and enum values.
    Params,
    /// The headings of a package's SKILL.md body.
    Headings,
    /// The opening prose of a package's SKILL.md body.
    Body,
}

impl Field {
    pub const ALL: [Field; 8] = [
        Field::Id,
        Field::Name,
        Field::Tags,
        Field::Description,
        Field::Examples,
        Field::Params,
        Field::Headings,
        Field::Body,
    ];
}

const FIELDS: usize = 8;

/// How much a match in each field counts, and how strongly its length
/// normalises. Short fields that name the skill count most.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Weights {
    pub field: [f32; FIELDS],
    pub b: [f32; FIELDS],
    pub k1: f32,
    /// Expansion discounts.
    pub fuzzy1: f32,
    pub fuzzy2: f32,
    pub prefix: f32,
    pub compound: f32,
    pub synonym: f32,
    /// Coordination: a skill's score is multiplied by
    /// `(matched query words / query words) ^ coordination`.
    pub coordination: f32,
    /// Discount of a query word's relatives in general English (the
    /// lexicon); 0 leaves them out.
    pub lexicon: f32,
}

impl Default for Weights {
    fn default() -> Self {
        Self {
            // A package's opening prose scores nothing term by term (it is
            // long and wanders), but its words still count as mentioned:
            // for coordination, document frequencies and the vocabulary
            // typos are corrected to. Chosen on the development queries.
            //        id   name tags desc  examples params headings body
            field: [2.0, 1.0, 2.0, 1.0, 1.2, 0.6, 0.2, 0.05],
            b: [0.3, 0.3, 0.3, 0.5, 0.75, 0.75, 0.75, 0.75],
            k1: 1.2,
            fuzzy1: 0.8,
            fuzzy2: 0.6,
            prefix: 0.6,
            compound: 0.9,
            synonym: 0.7,
            coordination: 0.75,
            lexicon: 0.3,
        }
    }
}

/// Which query expansions are on; all are on by default. The quality
/// bench turns them off one at a time to show what each is worth.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expansions {
    pub fuzzy: bool,
    pub prefix: bool,
    pub compound: bool,
    pub synonyms: bool,
}

impl Default for Expansions {
    fn default() -> Self {
        Self {
            fuzzy: true,
            prefix: true,
            compound: true,
            synonyms: true,
        }
    }
}

/// What discovery keeps about a skill besides its terms: enough to answer
/// the model and to ask the caller whether the skill is enabled.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexedSkill {
    pub id: SkillId,
    pub name: String,
    pub description: String,
    pub tier: Tier,
    pub category: Category,
    pub default_enabled: bool,
}

impl IndexedSkill {
    fn of(def: &SkillDefinition) -> Self {
        Self {
            id: def.id.clone(),
            name: def.name.clone(),
            description: def.description.clone(),
            tier: def.tier,
            category: def.category,
            default_enabled: def.default_enabled,
        }
    }
}

/// Permission settings asked about an index entry, which carries the
/// fields `PermissionSettings::is_enabled` reads from a definition.
/// Defined beside the index because permission sits below discovery.
impl PermissionSettings {
    /// Whether an indexed skill is enabled, counting its tier's switch.
    pub fn is_indexed_enabled(&self, skill: &IndexedSkill) -> bool {
        self.tier_enabled(skill.tier)
            && self
                .skill(skill.id.as_str())
                .enabled
                .unwrap_or(skill.default_enabled)
    }
}

/// What discovery keeps about an Agent Skills package: what the model is
/// told when it is found. The model reaches it through `activate_skill`.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexedPackage {
    pub name: String,
    pub description: String,
}

/// The searchable text of an Agent Skills package.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PackageText {
    pub name: String,
    /// The description the catalog would show.
    pub description: String,
    /// Keywords from its metadata.
    pub keywords: Vec<String>,
    /// The headings of its SKILL.md body, weighted lower.
    pub headings: Vec<String>,
    /// The opening prose of its SKILL.md body (no code, tables or
    /// headings), weighted lowest: it names what the skill works on in
    /// more words than the description has room for.
    #[serde(default)]
    pub body: String,
}

/// What one entry of the index stands for.
#[derive(Clone, Debug, PartialEq)]
pub enum Entry {
    /// A skill in the registry, loaded into the conversation when found.
    Skill(IndexedSkill),
    /// An enabled Agent Skills package, activated by name when found.
    Package(IndexedPackage),
}

impl Entry {
    /// The skill's id or the package's name.
    pub fn key(&self) -> &str {
        match self {
            Entry::Skill(s) => s.id.as_str(),
            Entry::Package(p) => &p.name,
        }
    }

    /// `skill` or `package`, as the CLI prints it.
    pub fn kind(&self) -> &'static str {
        match self {
            Entry::Skill(_) => "skill",
            Entry::Package(_) => "package",
        }
    }

    pub fn skill(&self) -> Option<&IndexedSkill> {
        match self {
            Entry::Skill(s) => Some(s),
            Entry::Package(_) => None,
        }
    }

    pub fn package(&self) -> Option<&IndexedPackage> {
        match self {
            Entry::Skill(_) => None,
            Entry::Package(p) => Some(p),
        }
    }
}

/// Skills and packages live in separate name spaces: a package may share
/// its name with a tool.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    Skill(SkillId),
    Package(String),
}

/// One ranked entry.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit<'a> {
    pub entry: &'a Entry,
    pub score: f32,
    slot: u32,
}

impl<'a> Hit<'a> {
    pub fn skill(&self) -> Option<&'a IndexedSkill> {
        self.entry.skill()
    }

    pub fn package(&self) -> Option<&'a IndexedPackage> {
        self.entry.package()
    }
}

#[derive(Clone, Debug)]
struct Doc {
    entry: Entry,
    /// The terms of the id and then the name, in order, for word-order
    /// agreement ("csv to json" vs "json to csv").
    title_terms: Vec<u32>,
    /// Whether the id or name says the entry destroys something.
    destructive: bool,
    field_len: [u32; FIELDS],
    /// The entry's terms, sorted, and where its posting sits in each
    /// term's list, so removal needs no scan.
    terms: Vec<u32>,
    positions: Vec<u32>,
    words: Vec<u32>,
}

#[derive(Clone, Copy, Debug)]
struct Posting {
    doc: u32,
    tf: [u16; FIELDS],
}

#[derive(Clone, Debug)]
struct Word {
    text: String,
    chars: Vec<char>,
    /// The index term of the word's stem.
    term: u32,
    /// How many live skills use the word.
    docs: u32,
}

/// Surface words as they appear in skills, for typo and prefix matching.
#[derive(Clone, Debug, Default)]
struct Vocabulary {
    ids: Map<String, u32>,
    /// The same words in order, for prefix completion.
    by_text: BTreeMap<String, u32>,
    words: Vec<Word>,
    /// (character bigram with word-boundary marks, word length) → the
    /// words of that length holding it; split by length so a typo search
    /// only visits words of plausible length.
    bigrams: Map<(char, char, usize), Vec<u32>>,
}

const START: char = '\u{2}';
const END: char = '\u{3}';

fn bigrams(chars: &[char]) -> Vec<(char, char)> {
    let mut out = Vec::with_capacity(chars.len() + 1);
    let mut prev = START;
    for &c in chars.iter().chain(std::iter::once(&END)) {
        out.push((prev, c));
        prev = c;
    }
    out.sort_unstable();
    out.dedup();
    out
}

impl Vocabulary {
    fn get(&self, text: &str) -> Option<u32> {
        self.ids.get(text).copied()
    }

    /// Adds a word no skill has used before; no live skill uses it yet.
    fn insert(&mut self, text: &str, term: u32) -> u32 {
        let id = self.words.len() as u32;
        let chars: Vec<char> = text.chars().collect();
        for (a, b) in bigrams(&chars) {
            self.bigrams
                .entry((a, b, chars.len()))
                .or_default()
                .push(id);
        }
        self.words.push(Word {
            text: text.to_string(),
            chars,
            term,
            docs: 0,
        });
        self.ids.insert(text.to_string(), id);
        self.by_text.insert(text.to_string(), id);
        id
    }

    fn release(&mut self, id: u32) {
        let w = &mut self.words[id as usize];
        w.docs = w.docs.saturating_sub(1);
    }

    fn live(&self, text: &str) -> bool {
        self.ids
            .get(text)
            .is_some_and(|&id| self.words[id as usize].docs > 0)
    }

    /// Live words within `max` edits of `word`, at the smallest distance
    /// any of them has.
    fn fuzzy(&self, word: &[char], max: usize) -> Vec<(u32, usize)> {
        let grams = bigrams(word);
        // q-gram bound: an edit destroys at most two bigrams, a
        // transposition three.
        let need = (word.len() + 1).saturating_sub(3 * max).max(1) as u16;
        let mut counts: Map<u32, u16> = Map::default();
        let lengths = word.len().saturating_sub(max).max(1)..=word.len() + max;
        for len in lengths {
            for &(a, b) in &grams {
                if let Some(list) = self.bigrams.get(&(a, b, len)) {
                    for &w in list {
                        *counts.entry(w).or_default() += 1;
                    }
                }
            }
        }
        let mut best = usize::MAX;
        let mut out = Vec::new();
        for (w, c) in counts {
            if c < need {
                continue;
            }
            let entry = &self.words[w as usize];
            if entry.docs == 0 || entry.chars.len().abs_diff(word.len()) > max {
                continue;
            }
            if let Some(d) = bounded_distance(word, &entry.chars, max.min(best)) {
                if d < best {
                    best = d;
                    out.clear();
                }
                if d == best {
                    out.push((w, d));
                }
            }
        }
        out.sort_unstable_by(|a, b| {
            let (wa, wb) = (&self.words[a.0 as usize], &self.words[b.0 as usize]);
            wb.docs.cmp(&wa.docs).then_with(|| wa.text.cmp(&wb.text))
        });
        out
    }

    /// Live words that start with `prefix` and are longer, most used first.
    fn completions(&self, prefix: &str, limit: usize) -> Vec<u32> {
        let mut out: Vec<u32> = self
            .by_text
            .range(prefix.to_string()..)
            .take_while(|(t, _)| t.starts_with(prefix))
            .filter(|(t, id)| t.len() > prefix.len() && self.words[**id as usize].docs > 0)
            .map(|(_, id)| *id)
            .collect();
        out.sort_by(|a, b| {
            let (wa, wb) = (&self.words[*a as usize], &self.words[*b as usize]);
            wb.docs.cmp(&wa.docs).then_with(|| wa.text.cmp(&wb.text))
        });
        out.truncate(limit);
        out
    }
}

/// The searchable index over skills and packages. Build it once from the
/// registry and the enabled packages, and keep it in step with `upsert`,
/// `upsert_package`, `remove` and `remove_package` as MCP servers and
/// Agent Skills packages come and go.
#[derive(Clone, Debug, Default)]
pub struct SkillIndex {
    docs: Vec<Option<Doc>>,
    free: Vec<u32>,
    slots: Map<Key, u32>,
    terms: Map<String, u32>,
    postings: Vec<Vec<Posting>>,
    vocabulary: Vocabulary,
    field_len_sum: [u64; FIELDS],
    weights: Weights,
    expansions: Expansions,
}

/// The text of each field of `def`.
fn field_texts(def: &SkillDefinition) -> [Vec<String>; FIELDS] {
    let mut params = Vec::new();
    collect_param_texts(&def.input_schema, 0, &mut params);
    [
        vec![def.id.to_string()],
        vec![def.name.clone()],
        def.tags.clone(),
        vec![def.description.clone()],
        def.examples.clone(),
        params,
        Vec::new(),
        Vec::new(),
    ]
}

/// The text of each field of a package: its name stands for both the id
/// and the name, as a skill's id and name usually say the same thing.
fn package_field_texts(package: &PackageText) -> [Vec<String>; FIELDS] {
    [
        vec![package.name.clone()],
        vec![package.name.clone()],
        package.keywords.clone(),
        vec![package.description.clone()],
        Vec::new(),
        Vec::new(),
        package.headings.clone(),
        vec![package.body.clone()],
    ]
}

fn collect_param_texts(schema: &Value, depth: usize, out: &mut Vec<String>) {
    if depth > 3 {
        return;
    }
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            out.push(name.clone());
            if let Some(d) = prop.get("description").and_then(Value::as_str) {
                out.push(d.to_string());
            }
            if let Some(values) = prop.get("enum").and_then(Value::as_array) {
                out.extend(values.iter().filter_map(Value::as_str).map(str::to_string));
            }
            collect_param_texts(prop, depth + 1, out);
            if let Some(items) = prop.get("items") {
                collect_param_texts(items, depth + 1, out);
            }
        }
    }
}

/// Adds a term to a slot, keeping the best weight.
fn put(alts: &mut Vec<(u32, f32)>, term: u32, weight: f32) {
    match alts.iter_mut().find(|(t, _)| *t == term) {
        Some(slot) => slot.1 = slot.1.max(weight),
        None => alts.push((term, weight)),
    }
}

/// Words in an id or name that mark a skill as destroying something.
const DESTRUCTIVE_WORDS: &[&str] = &[
    "delete", "remove", "erase", "destroy", "purge", "wipe", "drop", "cancel", "trash",
];

/// How much a destructive skill's score keeps when the query does not ask
/// to destroy anything: when a request is ambiguous ("a note"), offering
/// the skill that deletes is the worse mistake.
const UNASKED_DESTRUCTIVE: f32 = 0.8;

/// The id of the discovery tool itself, which is never indexed.
pub const DISCOVER_SKILLS_ID: &str = "discover_skills";

impl SkillIndex {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_weights(mut self, weights: Weights) -> Self {
        self.weights = weights;
        self
    }

    pub fn with_expansions(mut self, expansions: Expansions) -> Self {
        self.expansions = expansions;
        self
    }

    /// An index over `skills`.
    pub fn build<'a>(skills: impl IntoIterator<Item = &'a SkillDefinition>) -> Self {
        let mut index = Self::new();
        for s in skills {
            index.upsert(s);
        }
        index
    }

    /// How many entries (skills and packages) are indexed.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    pub fn contains(&self, id: &SkillId) -> bool {
        self.slots.contains_key(&Key::Skill(id.clone()))
    }

    pub fn contains_package(&self, name: &str) -> bool {
        self.slots.contains_key(&Key::Package(name.to_string()))
    }

    fn entry(&self, key: &Key) -> Option<&Entry> {
        let slot = *self.slots.get(key)?;
        self.docs[slot as usize].as_ref().map(|d| &d.entry)
    }

    pub fn get(&self, id: &SkillId) -> Option<&IndexedSkill> {
        self.entry(&Key::Skill(id.clone()))?.skill()
    }

    pub fn get_package(&self, name: &str) -> Option<&IndexedPackage> {
        self.entry(&Key::Package(name.to_string()))?.package()
    }

    /// Every indexed entry, in no particular order.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.docs.iter().flatten().map(|d| &d.entry)
    }

    /// Every indexed skill, in no particular order.
    pub fn skills(&self) -> impl Iterator<Item = &IndexedSkill> {
        self.entries().filter_map(Entry::skill)
    }

    /// Every indexed package, in no particular order.
    pub fn packages(&self) -> impl Iterator<Item = &IndexedPackage> {
        self.entries().filter_map(Entry::package)
    }

    /// Adds a skill, or replaces the one with the same id. The discovery
    /// tool itself is skipped.
    pub fn upsert(&mut self, def: &SkillDefinition) {
        if def.id.as_str() == DISCOVER_SKILLS_ID {
            return;
        }
        self.insert(
            Key::Skill(def.id.clone()),
            Entry::Skill(IndexedSkill::of(def)),
            field_texts(def),
        );
    }

    /// Adds an enabled Agent Skills package, or replaces the one with the
    /// same name.
    pub fn upsert_package(&mut self, package: &PackageText) {
        self.insert(
            Key::Package(package.name.clone()),
            Entry::Package(IndexedPackage {
                name: package.name.clone(),
                description: package.description.clone(),
            }),
            package_field_texts(package),
        );
    }

    fn insert(&mut self, key: Key, entry: Entry, fields: [Vec<String>; FIELDS]) {
        self.remove_key(&key);
        let mut tf: Map<u32, [u16; FIELDS]> = Map::default();
        let mut field_len = [0u32; FIELDS];
        let mut word_ids: Vec<u32> = Vec::new();
        for (f, texts) in fields.iter().enumerate() {
            for text in texts {
                for w in words(text).iter().chain(hyphen_joins(text).iter()) {
                    if is_noise(w) {
                        continue;
                    }
                    field_len[f] += 1;
                    let word = self.word_id(w);
                    let term = self.vocabulary.words[word as usize].term;
                    let counts = tf.entry(term).or_insert([0; FIELDS]);
                    counts[f] = counts[f].saturating_add(1);
                    word_ids.push(word);
                }
            }
        }
        word_ids.sort_unstable();
        word_ids.dedup();
        for w in &word_ids {
            self.vocabulary.words[*w as usize].docs += 1;
        }
        let mut title_terms = Vec::new();
        for text in fields[0].iter().chain(fields[1].iter()) {
            for w in words(text) {
                if !is_noise(&w) {
                    let word = self.word_id(&w);
                    title_terms.push(self.vocabulary.words[word as usize].term);
                }
            }
        }
        let destructive_terms = self.destructive_terms();
        let destructive = title_terms.iter().any(|t| destructive_terms.contains(t));
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.docs.push(None);
                (self.docs.len() - 1) as u32
            }
        };
        let mut terms: Vec<u32> = tf.keys().copied().collect();
        terms.sort_unstable();
        let mut positions = Vec::with_capacity(terms.len());
        for &t in &terms {
            let list = &mut self.postings[t as usize];
            positions.push(list.len() as u32);
            list.push(Posting {
                doc: slot,
                tf: tf[&t],
            });
        }
        for (sum, len) in self.field_len_sum.iter_mut().zip(field_len) {
            *sum += u64::from(len);
        }
        self.docs[slot as usize] = Some(Doc {
            entry,
            title_terms,
            destructive,
            field_len,
            terms,
            positions,
            words: word_ids,
        });
        self.slots.insert(key, slot);
    }

    /// Removes a skill; says whether it was there.
    pub fn remove(&mut self, id: &SkillId) -> bool {
        self.remove_key(&Key::Skill(id.clone()))
    }

    /// Removes a package (it was disabled or uninstalled); says whether it
    /// was there.
    pub fn remove_package(&mut self, name: &str) -> bool {
        self.remove_key(&Key::Package(name.to_string()))
    }

    /// Removes an entry in time proportional to its own terms: each of its
    /// postings is swapped with the last of its list, and the entry whose
    /// posting moved learns its new place.
    fn remove_key(&mut self, key: &Key) -> bool {
        let Some(slot) = self.slots.remove(key) else {
            return false;
        };
        let Some(doc) = self.docs[slot as usize].take() else {
            return false;
        };
        for (&t, &pos) in doc.terms.iter().zip(&doc.positions) {
            let list = &mut self.postings[t as usize];
            let pos = pos as usize;
            list.swap_remove(pos);
            if let Some(moved) = list.get(pos).map(|p| p.doc)
                && let Some(other) = self.docs[moved as usize].as_mut()
                && let Ok(i) = other.terms.binary_search(&t)
            {
                other.positions[i] = pos as u32;
            }
        }
        for w in &doc.words {
            self.vocabulary.release(*w);
        }
        for (sum, len) in self.field_len_sum.iter_mut().zip(doc.field_len) {
            *sum -= u64::from(len);
        }
        self.free.push(slot);
        true
    }

    /// The vocabulary id of a surface word, adding it (and its stem's
    /// term) when new.
    fn word_id(&mut self, w: &str) -> u32 {
        match self.vocabulary.get(w) {
            Some(id) => id,
            None => {
                let term = self.term_id(&stem(w));
                self.vocabulary.insert(w, term)
            }
        }
    }

    fn term_id(&mut self, stem: &str) -> u32 {
        if let Some(&id) = self.terms.get(stem) {
            return id;
        }
        let id = self.postings.len() as u32;
        self.postings.push(Vec::new());
        self.terms.insert(stem.to_string(), id);
        id
    }

    /// The terms of words that mark a skill as destructive.
    fn destructive_terms(&self) -> Vec<u32> {
        DESTRUCTIVE_WORDS
            .iter()
            .filter_map(|w| self.terms.get(&stem(w)).copied())
            .collect()
    }

    /// The term of a stem, if any live skill uses it.
    fn live_term(&self, stem: &str) -> Option<u32> {
        let id = *self.terms.get(stem)?;
        (!self.postings[id as usize].is_empty()).then_some(id)
    }

    /// The categories that hold at least one skill `is_enabled` accepts.
    pub fn categories(&self, is_enabled: &dyn Fn(&IndexedSkill) -> bool) -> Vec<Category> {
        let mut out: Vec<Category> = Vec::new();
        for s in self.skills() {
            if !out.contains(&s.category) && is_enabled(s) {
                out.push(s.category);
            }
        }
        out.sort();
        out
    }

    /// Turns a query into slots: one per meaningful word, each a set of
    /// index terms with the weight a match on them earns.
    pub(crate) fn expand(&self, query: &str) -> Vec<Vec<(u32, f32)>> {
        let raw = words(query);
        let mut slot_words: Vec<(String, bool)> = Vec::new();
        for (i, w) in raw.iter().enumerate() {
            if self.expansions.compound
                && let Some(next) = raw.get(i + 1)
            {
                let joined = format!("{w}{next}");
                if self.vocabulary.live(&joined) {
                    slot_words.push((joined, true));
                }
            }
            if !is_noise(w) {
                slot_words.push((w.clone(), false));
            }
        }
        let mut seen = Vec::new();
        slot_words.retain(|(w, _)| {
            let fresh = !seen.contains(w);
            seen.push(w.clone());
            fresh
        });

        let mut slots = Vec::new();
        for (word, joined) in slot_words {
            let base = if joined { self.weights.compound } else { 1.0 };
            let mut alts: Vec<(u32, f32)> = Vec::new();
            let s = stem(&word);
            // Stems whose synonyms also count, with the weight they earn.
            let mut primaries: Vec<(String, f32)> = vec![(s.clone(), base)];
            let chars: Vec<char> = word.chars().collect();
            let alphabetic = chars.iter().all(|c| c.is_alphabetic());
            let known = self.live_term(&s);
            if let Some(t) = known {
                put(&mut alts, t, base);
            } else if self.expansions.fuzzy && alphabetic {
                for (st, weight) in self.corrections(&chars) {
                    if let Some(t) = self.live_term(&st) {
                        put(&mut alts, t, base * weight);
                    }
                    primaries.push((st, base * weight));
                }
            }
            // An unknown word with no correction may be a fragment ("conv").
            let try_prefix = known.is_none() && alts.is_empty();
            if self.expansions.prefix && try_prefix && alphabetic && chars.len() >= 3 {
                for w in self.vocabulary.completions(&word, 4) {
                    let st = stem(&self.vocabulary.words[w as usize].text);
                    if st == s {
                        continue;
                    }
                    if let Some(t) = self.live_term(&st) {
                        put(&mut alts, t, base * self.weights.prefix);
                    }
                }
            }
            if self.expansions.compound
                && alts.is_empty()
                && alphabetic
                && let Some((a, b)) = self.split(&chars)
            {
                slots.push(vec![(a, self.weights.compound)]);
                slots.push(vec![(b, self.weights.compound)]);
                continue;
            }
            if self.expansions.synonyms {
                for (p, w) in &primaries {
                    for syn in synonyms(p) {
                        if let Some(t) = self.live_term(syn) {
                            put(&mut alts, t, w * self.weights.synonym);
                        }
                    }
                    // General English reaches words no hand-written group
                    // holds ("error" → "mistake", "test" → "examine"), at
                    // a steeper discount: a lexicon relative is often
                    // another sense than the one meant.
                    if self.weights.lexicon > 0.0 {
                        for rel in lexicon(p) {
                            if let Some(t) = self.live_term(rel) {
                                put(&mut alts, t, w * self.weights.lexicon);
                            }
                        }
                    }
                }
            }
            slots.push(alts);
        }
        slots
    }

    /// Spelling corrections for an unknown word, as stems with weights:
    /// words in the index or the thesaurus within one edit (two for long
    /// words) that start the same way. Typos rarely hit the first letter,
    /// and without that rule "sick" would become "pick".
    fn corrections(&self, word: &[char]) -> Vec<(String, f32)> {
        let max = match word.len() {
            0..=3 => return Vec::new(),
            4..=7 => 1,
            _ => 2,
        };
        let same_start = |c: &[char]| {
            c.first() == word.first()
                || (c.len() > 1 && word.len() > 1 && c[0] == word[1] && c[1] == word[0])
        };
        let mut found: Vec<(usize, String)> = Vec::new();
        for (w, d) in self.vocabulary.fuzzy(word, max) {
            let entry = &self.vocabulary.words[w as usize];
            if same_start(&entry.chars) {
                found.push((d, entry.text.clone()));
            }
        }
        for t in thesaurus_words() {
            if same_start(t)
                && let Some(d) = bounded_distance(word, t, max)
            {
                found.push((d, t.iter().collect()));
            }
        }
        let Some(best) = found.iter().map(|(d, _)| *d).min() else {
            return Vec::new();
        };
        let weight = if best <= 1 {
            self.weights.fuzzy1
        } else {
            self.weights.fuzzy2
        };
        let mut out: Vec<(String, f32)> = Vec::new();
        for (d, text) in found {
            let st = stem(&text);
            if d == best && !out.iter().any(|(s, _)| *s == st) {
                out.push((st, weight));
            }
        }
        out.truncate(4);
        out
    }

    /// Nudges the leading candidates by whether their id and name use the
    /// query's words in the query's order: "csv to json" should prefer
    /// `csv_to_json` over `json_to_csv`, which BM25 alone cannot tell apart.
    fn reorder_by_word_order(&self, slots: &[Vec<(u32, f32)>], hits: &mut [Hit<'_>], limit: usize) {
        if slots.len() < 2 {
            return;
        }
        let slot_of = |term: u32| {
            slots
                .iter()
                .position(|alts| alts.iter().any(|(t, _)| *t == term))
        };
        let consider = (limit * 4).min(hits.len());
        if hits.len() > consider {
            hits.select_nth_unstable_by(consider - 1, |a, b| b.score.total_cmp(&a.score));
        }
        for hit in hits.iter_mut().take(consider) {
            let Some(doc) = self.docs[hit.slot as usize].as_ref() else {
                continue;
            };
            // The id comes first in title_terms; judge order on the first
            // occurrence of each query slot.
            let mut seen: Vec<usize> = Vec::new();
            for t in &doc.title_terms {
                if let Some(s) = slot_of(*t)
                    && !seen.contains(&s)
                {
                    seen.push(s);
                }
            }
            let (mut agree, mut disagree) = (0i32, 0i32);
            for (i, a) in seen.iter().enumerate() {
                for b in &seen[i + 1..] {
                    if a < b {
                        agree += 1;
                    } else {
                        disagree += 1;
                    }
                }
            }
            let factor = 1.0 + 0.1 * (agree - disagree).clamp(-2, 2) as f32;
            hit.score *= factor;
        }
    }

    /// Splits an unknown word into two known ones ("timezone" → "time",
    /// "zone"), preferring the most even split.
    fn split(&self, chars: &[char]) -> Option<(u32, u32)> {
        let n = chars.len();
        let mut best: Option<(usize, u32, u32)> = None;
        for i in 4..=n.saturating_sub(4) {
            let a: String = chars[..i].iter().collect();
            let b: String = chars[i..].iter().collect();
            if is_stop_word(&a) || is_stop_word(&b) {
                continue;
            }
            if let (Some(ta), Some(tb)) = (self.live_term(&stem(&a)), self.live_term(&stem(&b))) {
                let skew = i.abs_diff(n - i);
                if best.is_none_or(|(s, _, _)| skew < s) {
                    best = Some((skew, ta, tb));
                }
            }
        }
        best.map(|(_, a, b)| (a, b))
    }

    /// How a query was read: each slot's terms and weights, for debugging
    /// rankings (`hearth skills search --explain`).
    pub fn explain_query(&self, query: &str) -> Vec<Vec<(String, f32)>> {
        let names: Map<u32, &str> = self.terms.iter().map(|(k, v)| (*v, k.as_str())).collect();
        self.expand(query)
            .into_iter()
            .map(|alts| {
                alts.into_iter()
                    .map(|(t, w)| (names.get(&t).copied().unwrap_or("?").to_string(), w))
                    .collect()
            })
            .collect()
    }

    /// Ranks the entries against `query`, best first, at most `limit`:
    /// the skills `is_enabled` accepts (and, with `category`, only that
    /// category's) and every package (packages are indexed only while
    /// enabled, and have no category).
    pub fn search(
        &self,
        query: &str,
        category: Option<Category>,
        limit: usize,
        is_enabled: &dyn Fn(&IndexedSkill) -> bool,
    ) -> Vec<Hit<'_>> {
        let slots = self.expand(query);
        if slots.is_empty() || limit == 0 {
            return Vec::new();
        }
        let live = self.len() as f32;
        let mut avg = [1.0f32; FIELDS];
        for (a, sum) in avg.iter_mut().zip(self.field_len_sum) {
            if sum > 0 {
                *a = sum as f32 / live;
            }
        }
        let n_docs = self.docs.len();
        let mut total = vec![0.0f32; n_docs];
        // 0 unknown, 1 allowed, 2 filtered out.
        let mut allowed = vec![0u8; n_docs];
        let mut slot_score = vec![0.0f32; n_docs];
        // Whether the entry mentions the current slot's word in any field,
        // even one that scores nothing: that still counts for coordination.
        let mut in_slot = vec![false; n_docs];
        let mut matched = vec![0u16; n_docs];
        let mut touched: Vec<u32> = Vec::new();
        let w = &self.weights;
        let mut field_params = [(0.0f32, 0.0f32, 1.0f32); FIELDS];
        for (i, p) in field_params.iter_mut().enumerate() {
            *p = (w.field[i], w.b[i], avg[i]);
        }
        for alts in &slots {
            for &(term, weight) in alts {
                let list = &self.postings[term as usize];
                let df = list.len() as f32;
                let idf = (1.0 + (live - df + 0.5) / (df + 0.5)).ln();
                for p in list {
                    let d = p.doc as usize;
                    if allowed[d] == 0 {
                        let ok = self.docs[d].as_ref().is_some_and(|doc| match &doc.entry {
                            Entry::Skill(skill) => {
                                category.is_none_or(|c| skill.category == c) && is_enabled(skill)
                            }
                            Entry::Package(_) => true,
                        });
                        allowed[d] = if ok { 1 } else { 2 };
                    }
                    if allowed[d] != 1 {
                        continue;
                    }
                    let Some(doc) = self.docs[d].as_ref() else {
                        continue;
                    };
                    let mut tf = 0.0f32;
                    for ((&count, &len), &(fw, b, a)) in
                        p.tf.iter().zip(&doc.field_len).zip(&field_params)
                    {
                        if count == 0 {
                            continue;
                        }
                        let norm = 1.0 - b + b * len as f32 / a;
                        tf += fw * f32::from(count) / norm.max(0.1);
                    }
                    let s = weight * idf * tf / (w.k1 + tf);
                    if !in_slot[d] {
                        in_slot[d] = true;
                        touched.push(p.doc);
                    }
                    if s > slot_score[d] {
                        slot_score[d] = s;
                    }
                }
            }
            for &d in &touched {
                total[d as usize] += slot_score[d as usize];
                matched[d as usize] += 1;
                slot_score[d as usize] = 0.0;
                in_slot[d as usize] = false;
            }
            touched.clear();
        }
        let destructive = self.destructive_terms();
        let asks_to_destroy = slots
            .iter()
            .any(|alts| alts.iter().any(|(t, _)| destructive.contains(t)));
        let mut hits: Vec<Hit<'_>> = total
            .iter()
            .enumerate()
            .filter(|(_, s)| **s > 0.0)
            .filter_map(|(d, s)| {
                let coverage = f32::from(matched[d]) / slots.len() as f32;
                self.docs[d].as_ref().map(|doc| {
                    let caution = if doc.destructive && !asks_to_destroy {
                        UNASKED_DESTRUCTIVE
                    } else {
                        1.0
                    };
                    Hit {
                        entry: &doc.entry,
                        score: *s * coverage.powf(w.coordination) * caution,
                        slot: d as u32,
                    }
                })
            })
            .collect();
        self.reorder_by_word_order(&slots, &mut hits, limit);
        let order = |a: &Hit<'_>, b: &Hit<'_>| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.entry.key().cmp(b.entry.key()))
                .then_with(|| a.entry.kind().cmp(b.entry.kind()))
        };
        if hits.len() > limit {
            hits.select_nth_unstable_by(limit - 1, order);
            hits.truncate(limit);
        }
        hits.sort_by(order);
        hits
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn skill(id: &str, name: &str, category: Category, description: &str) -> SkillDefinition {
        SkillDefinition::new(SkillId::new(id).unwrap(), name, Tier::Core, category)
            .with_description(description)
    }

    fn ids(hits: &[Hit<'_>]) -> Vec<String> {
        hits.iter().map(|h| h.entry.key().to_string()).collect()
    }

    fn all(_: &IndexedSkill) -> bool {
        true
    }

    fn sample() -> SkillIndex {
        let mut mail = skill(
            "send_email",
            "Send email",
            Category::Integrations,
            "Send an email message to one or more recipients.",
        )
        .with_tags(["email", "mail"]);
        mail.input_schema = json!({
            "type": "object",
            "properties": {
                "to": {"type": "string", "description": "Recipient address"},
                "subject": {"type": "string"},
                "body": {"type": "string"}
            }
        });
        let todo = skill(
            "tasks_add",
            "Add task",
            Category::Productivity,
            "Add an item to your to-do list.",
        );
        let tz = skill(
            "time_zone_convert",
            "Time zone converter",
            Category::Productivity,
            "Convert a time between time zones.",
        );
        let img = skill(
            "image_resize",
            "Resize image",
            Category::Productivity,
            "Resize a picture to new dimensions.",
        );
        SkillIndex::build([&mail, &todo, &tz, &img])
    }

    #[test]
    fn ranks_by_relevance_with_expansions() {
        let index = sample();
        let cases: &[(&str, &str)] = &[
            ("send an email", "send_email"),
            ("emial someone", "send_email"),
            ("subject and recipient", "send_email"),
            ("todo", "tasks_add"),
            ("timezone", "time_zone_convert"),
            ("photo too big", "image_resize"),
            ("resizing pictures", "image_resize"),
        ];
        for (q, want) in cases {
            let hits = index.search(q, None, 5, &all);
            assert_eq!(ids(&hits).first().map(String::as_str), Some(*want), "{q}");
        }
    }

    #[test]
    fn filters_by_category_and_enabled() {
        let index = sample();
        let hits = index.search("convert", Some(Category::Integrations), 5, &all);
        assert_eq!(ids(&hits), Vec::<String>::new());
        let not_mail = |s: &IndexedSkill| s.id.as_str() != "send_email";
        assert_eq!(
            ids(&index.search("email", None, 5, &not_mail)),
            Vec::<String>::new()
        );
        assert_eq!(index.categories(&not_mail), vec![Category::Productivity]);
    }

    #[test]
    fn updates_keep_statistics_live() {
        let mut index = sample();
        assert_eq!(index.len(), 4);
        assert!(index.remove(&SkillId::new("send_email").unwrap()));
        assert!(!index.remove(&SkillId::new("send_email").unwrap()));
        assert_eq!(
            ids(&index.search("email", None, 5, &all)),
            Vec::<String>::new()
        );
        // Typos no longer land on words only the removed skill used.
        assert_eq!(
            ids(&index.search("emial", None, 5, &all)),
            Vec::<String>::new()
        );
        let again = skill("send_email", "Mail", Category::Integrations, "Send mail.");
        index.upsert(&again);
        index.upsert(&again);
        assert_eq!(index.len(), 4);
        assert_eq!(ids(&index.search("mail", None, 5, &all)), ["send_email"]);
        assert_eq!(index.get(&again.id).unwrap().name, "Mail");
    }

    fn package(name: &str, description: &str) -> PackageText {
        PackageText {
            name: name.into(),
            description: description.into(),
            keywords: vec![],
            headings: vec![],
            body: String::new(),
        }
    }

    /// Every (key, kind, score) the index ranks for `query`, rounded so
    /// that float summation order does not matter.
    fn ranking(index: &SkillIndex, query: &str) -> Vec<(String, &'static str, i64)> {
        index
            .search(query, None, 100, &all)
            .iter()
            .map(|h| {
                (
                    h.entry.key().to_string(),
                    h.entry.kind(),
                    (h.score * 1e4).round() as i64,
                )
            })
            .collect()
    }

    #[test]
    fn packages_and_skills_share_one_index_but_not_names() {
        let mut index = sample();
        index.upsert_package(&package("image_resize", "Crop photos for social media."));
        assert_eq!(index.len(), 5);
        assert!(index.contains_package("image_resize"));
        assert!(index.contains(&SkillId::new("image_resize").unwrap()));
        let hits = index.search("crop photos for instagram", None, 5, &all);
        assert_eq!(hits[0].entry.kind(), "package");
        assert_eq!(
            hits[0].package().unwrap().description,
            "Crop photos for social media."
        );
        assert!(index.remove_package("image_resize"));
        assert!(index.contains(&SkillId::new("image_resize").unwrap()));
        assert_eq!(index.packages().count(), 0);
    }

    #[test]
    fn headings_count_but_less_than_the_description() {
        let mut index = SkillIndex::new();
        index.upsert_package(&package("a-guide", "Spreadsheet formulas."));
        index.upsert_package(&PackageText {
            headings: vec!["Spreadsheet formulas".into()],
            ..package("b-guide", "Slide decks.")
        });
        assert_eq!(
            ranking(&index, "spreadsheet formulas")
                .iter()
                .map(|r| r.0.as_str())
                .collect::<Vec<_>>(),
            ["a-guide", "b-guide"]
        );
    }

    /// Adding and removing entries one at a time leaves the index ranking
    /// exactly as an index built from the survivors would.
    #[test]
    fn incremental_updates_match_a_fresh_build() {
        let skills: Vec<SkillDefinition> = (0..40)
            .map(|i| {
                skill(
                    &format!("tool_{i}"),
                    &format!("Tool {i}"),
                    Category::ALL[i % 4],
                    &format!(
                        "Does task {} with {} files and {} reports.",
                        i % 7,
                        ["csv", "pdf", "image", "audio"][i % 4],
                        ["weekly", "monthly", "daily"][i % 3]
                    ),
                )
            })
            .collect();
        let packages: Vec<PackageText> = (0..40)
            .map(|i| PackageText {
                headings: vec![format!("Step {} for {}", i % 5, ["csv", "audio"][i % 2])],
                ..package(
                    &format!("pack-{i}"),
                    &format!(
                        "Guides {} reports about {} files.",
                        ["weekly", "daily"][i % 2],
                        ["pdf", "image", "csv"][i % 3]
                    ),
                )
            })
            .collect();
        let mut live = SkillIndex::new();
        for (s, p) in skills.iter().zip(&packages) {
            live.upsert(s);
            live.upsert_package(p);
        }
        // Remove every third of each, replace every fifth skill, re-add
        // two removed packages.
        let mut kept_skills: Vec<SkillDefinition> = Vec::new();
        for (i, s) in skills.iter().enumerate() {
            if i % 3 == 0 {
                assert!(live.remove(&s.id));
            } else if i % 5 == 0 {
                let changed = SkillDefinition {
                    description: format!("Audio transcripts, version {i}."),
                    ..s.clone()
                };
                live.upsert(&changed);
                kept_skills.push(changed);
            } else {
                kept_skills.push(s.clone());
            }
        }
        let mut kept_packages: Vec<PackageText> = Vec::new();
        for (i, p) in packages.iter().enumerate() {
            if i % 3 == 1 {
                assert!(live.remove_package(&p.name));
            } else {
                kept_packages.push(p.clone());
            }
        }
        for p in [&packages[1], &packages[4]] {
            live.upsert_package(p);
            kept_packages.push(p.clone());
        }
        let mut fresh = SkillIndex::new();
        for s in &kept_skills {
            fresh.upsert(s);
        }
        for p in &kept_packages {
            fresh.upsert_package(p);
        }
        assert_eq!(live.len(), fresh.len());
        for q in [
            "weekly csv reports",
            "audio",
            "pdf files",
            "step 3",
            "monthly image",
            "tool 7",
        ] {
            let mut a = ranking(&live, q);
            let mut b = ranking(&fresh, q);
            a.sort();
            b.sort();
            assert_eq!(a, b, "{q}");
        }
    }

    #[test]
    fn the_discovery_tool_is_never_indexed() {
        let d = skill(
            DISCOVER_SKILLS_ID,
            "Discover",
            Category::Productivity,
            "find skills",
        );
        let index = SkillIndex::build([&d]);
        assert!(index.is_empty());
    }

    #[test]
    fn nonsense_finds_nothing() {
        let index = sample();
        assert_eq!(
            ids(&index.search("xyzzy qwv", None, 5, &all)),
            Vec::<String>::new()
        );
        assert_eq!(
            ids(&index.search("the of and", None, 5, &all)),
            Vec::<String>::new()
        );
    }
}
