//! The scaled catalog the scale tests and benches share, native and in
//! the browser: the discovery fixture catalog with the real built-ins,
//! copied until it holds `n` skills. The fixture is compiled in, so the
//! app's in-browser bench includes this file as it is.

#![allow(dead_code)]

use hearth_core::SkillDefinition;

const CATALOG: &str = include_str!("../fixtures/discovery/catalog.json");

/// The fixture catalog with the real built-in definitions; a built-in
/// replaces a fixture skill with the same id.
pub fn catalog() -> Vec<SkillDefinition> {
    let mut skills: Vec<SkillDefinition> = serde_json::from_str(CATALOG).expect("catalog parses");
    for builtin in hearth_core::builtin::definitions() {
        skills.retain(|s| s.id != builtin.id);
        skills.push(builtin);
    }
    skills
}

/// A catalog of about `n` skills: the fixture catalog copied with
/// distinct ids and a few distinct words per copy, as a stand-in for a
/// registry grown by many MCP servers.
pub fn scaled_catalog(n: usize) -> Vec<SkillDefinition> {
    let base = catalog();
    let vendors = [
        "acme",
        "globex",
        "initech",
        "umbrella",
        "hooli",
        "vandelay",
        "stark",
        "wayne",
        "wonka",
        "tyrell",
        "cyberdyne",
        "soylent",
        "oscorp",
        "aperture",
        "monarch",
        "dunder",
    ];
    let mut out = Vec::with_capacity(n);
    let mut copy = 0usize;
    while out.len() < n {
        for s in &base {
            if out.len() == n {
                break;
            }
            let mut s = s.clone();
            if copy > 0 {
                let vendor = vendors[(copy + out.len()) % vendors.len()];
                s.id = hearth_core::SkillId::new(format!("{}_{vendor}{copy}", s.id))
                    .unwrap_or_else(|e| panic!("{e}"));
                s.name = format!("{} ({vendor} {copy})", s.name);
                s.description = format!("{} Provided by {vendor} instance {copy}.", s.description);
                s.tags.push(format!("{vendor}{copy}"));
            }
            out.push(s);
        }
        copy += 1;
    }
    out
}
