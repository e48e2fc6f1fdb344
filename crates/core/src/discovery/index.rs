//! The discovery index: BM25F over a skill's fields, kept up to date as
//! skills are added and removed, with typo, prefix, compound and synonym
//! expansion of query words.
//!
//! Scoring, per query word `q` and skill `d`:
//! `score(q, d) = max over expansions (t, w) of w · idf(t) · tf̃ / (k1 + tf̃)`
//! where `tf̃ = Σ_fields weight_f · tf_f / (1 − b_f + b_f · len_f / avglen_f)`.
//! A skill's score is the sum over the query's words. Statistics (N, df,
//! average field lengths) are live, so updates never need a rebuild.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

use super::text::{bounded_distance, is_stop_word, stem, synonyms, words};
use crate::skill::{Category, SkillDefinition, SkillId, Tier};

/// The fields of a skill that discovery reads, in index order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Id,
    Name,
    Tags,
    Description,
    Examples,
    /// Parameter names, their descriptions and enum values.
    Params,
}

impl Field {
    pub const ALL: [Field; 6] = [
        Field::Id,
        Field::Name,
        Field::Tags,
        Field::Description,
        Field::Examples,
        Field::Params,
    ];
}

const FIELDS: usize = 6;

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
}

impl Default for Weights {
    fn default() -> Self {
        Self {
            //        id   name tags desc  examples params
            field: [2.0, 3.0, 2.0, 1.0, 1.2, 0.6],
            b: [0.3, 0.3, 0.3, 0.75, 0.75, 0.75],
            k1: 1.2,
            fuzzy1: 0.8,
            fuzzy2: 0.6,
            prefix: 0.6,
            compound: 0.9,
            synonym: 0.5,
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

/// One ranked skill.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit<'a> {
    pub skill: &'a IndexedSkill,
    pub score: f32,
}

#[derive(Clone, Debug)]
struct Doc {
    skill: IndexedSkill,
    field_len: [u32; FIELDS],
    terms: Vec<u32>,
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
    /// How many live skills use the word.
    docs: u32,
}

/// Surface words as they appear in skills, for typo and prefix matching.
#[derive(Clone, Debug, Default)]
struct Vocabulary {
    by_text: BTreeMap<String, u32>,
    words: Vec<Word>,
    /// Character bigrams (with word-boundary marks) → words holding them.
    bigrams: HashMap<(char, char), Vec<u32>>,
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
    fn add(&mut self, text: &str) -> u32 {
        if let Some(&id) = self.by_text.get(text) {
            self.words[id as usize].docs += 1;
            return id;
        }
        let id = self.words.len() as u32;
        let chars: Vec<char> = text.chars().collect();
        for g in bigrams(&chars) {
            self.bigrams.entry(g).or_default().push(id);
        }
        self.words.push(Word {
            text: text.to_string(),
            chars,
            docs: 1,
        });
        self.by_text.insert(text.to_string(), id);
        id
    }

    fn release(&mut self, id: u32) {
        let w = &mut self.words[id as usize];
        w.docs = w.docs.saturating_sub(1);
    }

    fn live(&self, text: &str) -> bool {
        self.by_text
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
        let mut counts: HashMap<u32, u16> = HashMap::new();
        for g in &grams {
            if let Some(list) = self.bigrams.get(g) {
                for &w in list {
                    *counts.entry(w).or_default() += 1;
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

/// The searchable index over skills. Build it once from the registry and
/// keep it in step with `upsert` and `remove` as MCP servers and Agent
/// Skills packages come and go.
#[derive(Clone, Debug, Default)]
pub struct SkillIndex {
    docs: Vec<Option<Doc>>,
    free: Vec<u32>,
    slots: HashMap<SkillId, u32>,
    terms: HashMap<String, u32>,
    postings: Vec<Vec<Posting>>,
    vocabulary: Vocabulary,
    field_len_sum: [u64; FIELDS],
    weights: Weights,
    expansions: Expansions,
}

/// The text of each field of `def`, as words.
fn field_words(def: &SkillDefinition) -> [Vec<String>; FIELDS] {
    let mut params = Vec::new();
    collect_param_words(&def.input_schema, 0, &mut params);
    [
        words(def.id.as_str()),
        words(&def.name),
        def.tags.iter().flat_map(|t| words(t)).collect(),
        words(&def.description),
        def.examples.iter().flat_map(|e| words(e)).collect(),
        params,
    ]
}

fn collect_param_words(schema: &Value, depth: usize, out: &mut Vec<String>) {
    if depth > 3 {
        return;
    }
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (name, prop) in props {
            out.extend(words(name));
            if let Some(d) = prop.get("description").and_then(Value::as_str) {
                out.extend(words(d));
            }
            if let Some(values) = prop.get("enum").and_then(Value::as_array) {
                for v in values.iter().filter_map(Value::as_str) {
                    out.extend(words(v));
                }
            }
            collect_param_words(prop, depth + 1, out);
            if let Some(items) = prop.get("items") {
                collect_param_words(items, depth + 1, out);
            }
        }
    }
}

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

    /// How many skills are indexed.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    pub fn contains(&self, id: &SkillId) -> bool {
        self.slots.contains_key(id)
    }

    pub fn get(&self, id: &SkillId) -> Option<&IndexedSkill> {
        let slot = *self.slots.get(id)?;
        self.docs[slot as usize].as_ref().map(|d| &d.skill)
    }

    /// Every indexed skill, in no particular order.
    pub fn skills(&self) -> impl Iterator<Item = &IndexedSkill> {
        self.docs.iter().flatten().map(|d| &d.skill)
    }

    /// Adds a skill, or replaces the one with the same id. The discovery
    /// tool itself is skipped.
    pub fn upsert(&mut self, def: &SkillDefinition) {
        if def.id.as_str() == DISCOVER_SKILLS_ID {
            return;
        }
        self.remove(&def.id);
        let fields = field_words(def);
        let mut tf: HashMap<u32, [u16; FIELDS]> = HashMap::new();
        let mut field_len = [0u32; FIELDS];
        let mut word_ids: Vec<u32> = Vec::new();
        let mut seen_words: HashMap<String, ()> = HashMap::new();
        for (f, list) in fields.iter().enumerate() {
            let mut add = |w: &str, this: &mut Self| {
                let term = this.term_id(&stem(w));
                let counts = tf.entry(term).or_insert([0; FIELDS]);
                counts[f] = counts[f].saturating_add(1);
                if seen_words.insert(w.to_string(), ()).is_none() {
                    word_ids.push(this.vocabulary.add(w));
                }
            };
            for (i, w) in list.iter().enumerate() {
                // Short pairs also count joined, so "to-do" meets "todo"
                // and "git hub" meets "github".
                if let Some(next) = list.get(i + 1) {
                    let alpha = |s: &str| s.chars().all(char::is_alphabetic);
                    if (w.chars().count() <= 3 || next.chars().count() <= 3)
                        && alpha(w)
                        && alpha(next)
                    {
                        add(&format!("{w}{next}"), self);
                    }
                }
                if is_stop_word(w) {
                    continue;
                }
                field_len[f] += 1;
                add(w, self);
            }
        }
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.docs.push(None);
                (self.docs.len() - 1) as u32
            }
        };
        let mut terms: Vec<u32> = tf.keys().copied().collect();
        terms.sort_unstable();
        for &t in &terms {
            self.postings[t as usize].push(Posting {
                doc: slot,
                tf: tf[&t],
            });
        }
        for (sum, len) in self.field_len_sum.iter_mut().zip(field_len) {
            *sum += u64::from(len);
        }
        self.docs[slot as usize] = Some(Doc {
            skill: IndexedSkill::of(def),
            field_len,
            terms,
            words: word_ids,
        });
        self.slots.insert(def.id.clone(), slot);
    }

    /// Removes a skill; says whether it was there.
    pub fn remove(&mut self, id: &SkillId) -> bool {
        let Some(slot) = self.slots.remove(id) else {
            return false;
        };
        let Some(doc) = self.docs[slot as usize].take() else {
            return false;
        };
        for t in &doc.terms {
            self.postings[*t as usize].retain(|p| p.doc != slot);
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

    fn term_id(&mut self, stem: &str) -> u32 {
        if let Some(&id) = self.terms.get(stem) {
            return id;
        }
        let id = self.postings.len() as u32;
        self.postings.push(Vec::new());
        self.terms.insert(stem.to_string(), id);
        id
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
            if !is_stop_word(w) {
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
            let put = |alts: &mut Vec<(u32, f32)>, term: u32, w: f32| match alts
                .iter_mut()
                .find(|(t, _)| *t == term)
            {
                Some(slot) => slot.1 = slot.1.max(w),
                None => alts.push((term, w)),
            };
            let s = stem(&word);
            let mut primaries: Vec<(String, f32)> = vec![(s.clone(), base)];
            if let Some(t) = self.live_term(&s) {
                put(&mut alts, t, base);
            } else {
                let chars: Vec<char> = word.chars().collect();
                let alphabetic = chars.iter().all(|c| c.is_alphabetic());
                let max = match chars.len() {
                    0..=3 => 0,
                    4..=7 => 1,
                    _ => 2,
                };
                if self.expansions.fuzzy && alphabetic && max > 0 {
                    for (w, d) in self.vocabulary.fuzzy(&chars, max).into_iter().take(4) {
                        let weight = if d <= 1 {
                            self.weights.fuzzy1
                        } else {
                            self.weights.fuzzy2
                        };
                        let st = stem(&self.vocabulary.words[w as usize].text);
                        if let Some(t) = self.live_term(&st) {
                            put(&mut alts, t, base * weight);
                            primaries.push((st, base * weight));
                        }
                    }
                }
                if self.expansions.prefix && alphabetic && chars.len() >= 3 {
                    for w in self.vocabulary.completions(&word, 6) {
                        let st = stem(&self.vocabulary.words[w as usize].text);
                        if let Some(t) = self.live_term(&st) {
                            put(&mut alts, t, base * self.weights.prefix);
                            primaries.push((st, base * self.weights.prefix));
                        }
                    }
                }
                if self.expansions.compound
                    && alts.is_empty()
                    && alphabetic
                    && chars.len() >= 6
                    && let Some((a, b)) = self.split(&chars)
                {
                    slots.push(vec![(a, self.weights.compound)]);
                    slots.push(vec![(b, self.weights.compound)]);
                    continue;
                }
            }
            if self.expansions.synonyms {
                for (p, w) in &primaries {
                    for syn in synonyms(p) {
                        if let Some(t) = self.live_term(syn) {
                            put(&mut alts, t, w * self.weights.synonym);
                        }
                    }
                }
            }
            slots.push(alts);
        }
        slots
    }

    /// Splits an unknown word into two known ones ("timezone" → "time",
    /// "zone"), preferring the most even split.
    fn split(&self, chars: &[char]) -> Option<(u32, u32)> {
        let n = chars.len();
        let mut best: Option<(usize, u32, u32)> = None;
        for i in 3..=n.saturating_sub(3) {
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

    /// Ranks the skills `is_enabled` accepts (and, with `category`, only
    /// that category's) against `query`, best first, at most `limit`.
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
                        let ok = self.docs[d].as_ref().is_some_and(|doc| {
                            category.is_none_or(|c| doc.skill.category == c)
                                && is_enabled(&doc.skill)
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
                    if slot_score[d] == 0.0 {
                        touched.push(p.doc);
                    }
                    if s > slot_score[d] {
                        slot_score[d] = s;
                    }
                }
            }
            for &d in &touched {
                total[d as usize] += slot_score[d as usize];
                slot_score[d as usize] = 0.0;
            }
            touched.clear();
        }
        let mut hits: Vec<Hit<'_>> = total
            .iter()
            .enumerate()
            .filter(|(_, s)| **s > 0.0)
            .filter_map(|(d, s)| {
                self.docs[d].as_ref().map(|doc| Hit {
                    skill: &doc.skill,
                    score: *s,
                })
            })
            .collect();
        let order = |a: &Hit<'_>, b: &Hit<'_>| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.skill.id.cmp(&b.skill.id))
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
        hits.iter().map(|h| h.skill.id.to_string()).collect()
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
