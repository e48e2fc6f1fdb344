//! The calculator against independent references, computed as the test
//! runs by other programs: Python's standard library (`datetime`,
//! `calendar`, `fractions`) for dates and percentages, through
//! `reference/calculator_reference.py`, and GNU `units` for conversions.
//! Every expression is written the way a person types it (ISO and spelled
//! dates, "days between … and …", "weeks since …", "15% off 80"); the
//! reference gets the same question as plain data, never the calculator's
//! answer. The cases are generated from a fixed seed, so a failure repeats.
//!
//! `cargo xtask test` installs GNU units (the Debian package `units`);
//! without it, or without python3, this test fails and says so.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::process::{Command, Stdio};

use hearth_core::builtin::calculator::{Clock, evaluate};
use serde_json::{Value, json};

/// 2026-11-21 12:00 UTC: "today" for "days until" and "weeks since".
const CLOCK: Clock = Clock {
    unix_ms: 1_795_262_400_000.0,
    utc_offset_minutes: 0,
};
const TODAY: &str = "2026-11-21";

/// xorshift64*: a small generator, so the cases are the same every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

#[derive(Clone, Copy, Debug)]
struct Day {
    y: i64,
    m: u32,
    d: u32,
}

impl Day {
    fn iso(self) -> String {
        format!("{:04}-{:02}-{:02}", self.y, self.m, self.d)
    }

    /// The date as a person might type it, in one of several styles.
    fn typed(self, style: u64) -> String {
        let month = MONTHS[(self.m - 1) as usize];
        match style % 6 {
            0 | 1 => self.iso(),
            2 => format!("{} {month} {}", self.d, self.y),
            3 => format!("{month} {}, {}", self.d, self.y),
            4 => format!("{} {} {}", &month[..3], self.d, self.y),
            _ => format!("{}{} {} {}", self.d, ordinal(self.d), &month[..3], self.y),
        }
    }
}

fn ordinal(d: u32) -> &'static str {
    match (d % 10, d % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    }
}

fn leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn random_day(rng: &mut Rng) -> Day {
    let y = 1950 + rng.below(151) as i64;
    let m = 1 + rng.below(12) as u32;
    let days = match m {
        2 if leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    // Month ends come up often on purpose: that is where calendars go wrong.
    let d = if rng.below(4) == 0 {
        days
    } else {
        1 + rng.below(u64::from(days)) as u32
    };
    Day { y, m, d }
}

/// One expression, and the question its reference answers.
struct Case {
    expression: String,
    check: Check,
}

enum Check {
    /// Python answers `query`.
    Python(Value),
    /// GNU units converts `have` to `want`.
    Units { have: String, want: String },
}

fn diff(expression: String, from: &str, to: &str, unit: &str) -> Case {
    Case {
        expression,
        check: Check::Python(json!({"kind": "diff", "from": from, "to": to, "unit": unit})),
    }
}

fn date_cases(rng: &mut Rng) -> Vec<Case> {
    let mut out = Vec::new();
    for i in 0..120u64 {
        let (a, b) = (random_day(rng), random_day(rng));
        let (ta, tb) = (a.typed(rng.next()), b.typed(rng.next()));
        let case = match i % 12 {
            // Subtraction reads as "how far is the first from the second".
            0 => diff(
                format!("{} - {}", a.iso(), b.iso()),
                &b.iso(),
                &a.iso(),
                "days",
            ),
            1 => diff(format!("{ta} - {tb}"), &b.iso(), &a.iso(), "days"),
            2 => diff(
                format!("days between {ta} and {tb}"),
                &a.iso(),
                &b.iso(),
                "days",
            ),
            3 => diff(
                format!("How many days are there between {ta} and {tb}?"),
                &a.iso(),
                &b.iso(),
                "days",
            ),
            4 => diff(format!("from {ta} to {tb}"), &a.iso(), &b.iso(), "days"),
            5 => diff(
                format!("weeks between {ta} and {tb}"),
                &a.iso(),
                &b.iso(),
                "weeks",
            ),
            6 => diff(
                format!("months between {ta} and {tb}"),
                &a.iso(),
                &b.iso(),
                "months",
            ),
            7 => diff(
                format!("years between {ta} and {tb}"),
                &a.iso(),
                &b.iso(),
                "years",
            ),
            8 => diff(format!("days until {tb}"), TODAY, &b.iso(), "days"),
            9 => diff(format!("weeks since {ta}"), &a.iso(), TODAY, "weeks"),
            10 => diff(
                format!("hours between {ta} and {tb}"),
                &a.iso(),
                &b.iso(),
                "hours",
            ),
            _ => diff(
                format!("from {ta} to {tb} in weeks"),
                &a.iso(),
                &b.iso(),
                "weeks",
            ),
        };
        out.push(case);
    }
    for i in 0..40u64 {
        let a = random_day(rng);
        let ta = a.typed(rng.next());
        let n = 1 + rng.below(400) as i64;
        let k = 1 + rng.below(40) as i64;
        let (expression, steps) = match i % 8 {
            0 => (format!("{ta} + {n} days"), json!([[1, n, "days"]])),
            1 => (format!("{ta} - {n} days"), json!([[-1, n, "days"]])),
            2 => (format!("{ta} + {k} weeks"), json!([[1, k, "weeks"]])),
            3 => (format!("{ta} + {k} months"), json!([[1, k, "months"]])),
            4 => (format!("{ta} - {k} years"), json!([[-1, k, "years"]])),
            5 => (format!("{n} days after {ta}"), json!([[1, n, "days"]])),
            6 => (format!("{k} weeks before {ta}"), json!([[-1, k, "weeks"]])),
            _ => (
                format!("{ta} + {k} months - {n} days"),
                json!([[1, k, "months"], [-1, n, "days"]]),
            ),
        };
        out.push(Case {
            expression,
            check: Check::Python(json!({"kind": "shift", "date": a.iso(), "steps": steps})),
        });
    }
    out
}

/// A number as a person types it: whole, or with one or two decimals.
fn number(rng: &mut Rng, most: u64) -> String {
    let whole = 1 + rng.below(most);
    match rng.below(3) {
        0 => whole.to_string(),
        1 => format!("{whole}.{}", rng.below(10)),
        _ => format!("{whole}.{:02}", 1 + rng.below(99)),
    }
}

fn percent_cases(rng: &mut Rng) -> Vec<Case> {
    let mut out = Vec::new();
    for i in 0..40u64 {
        let p = number(rng, 99);
        let x = number(rng, 5_000);
        let (expression, form, a, b) = match i % 6 {
            0 => (format!("{p}% of {x}"), "of", p.clone(), x.clone()),
            1 => (format!("what is {p}% of {x}?"), "of", p.clone(), x.clone()),
            2 => (format!("{x} + {p}%"), "plus", p.clone(), x.clone()),
            3 => (format!("{x} - {p}%"), "minus", p.clone(), x.clone()),
            4 => (format!("{p}% off {x}"), "off", p.clone(), x.clone()),
            _ => (
                format!("{p} as a percentage of {x}"),
                "share",
                p.clone(),
                x.clone(),
            ),
        };
        out.push(Case {
            expression,
            check: Check::Python(json!({"kind": "percent", "form": form, "a": a, "b": b})),
        });
    }
    out
}

/// (how fend reads the units, how GNU units reads them). `{}` is the
/// amount, for the temperature functions.
const CONVERSIONS: [(&str, &str, &str, &str); 20] = [
    ("miles", "km", "{} mile", "km"),
    ("km", "miles", "{} km", "mile"),
    ("inches", "cm", "{} inch", "cm"),
    ("feet", "m", "{} foot", "m"),
    ("yards", "m", "{} yard", "m"),
    ("pounds", "kg", "{} pound", "kg"),
    ("kg", "pounds", "{} kg", "pound"),
    ("ounces", "g", "{} ounce", "g"),
    ("gallons", "L", "{} gallon", "liter"),
    ("mph", "km/h", "{} mph", "km/hr"),
    ("knots", "km/h", "{} knot", "km/hr"),
    ("kWh", "MJ", "{} kWh", "MJ"),
    ("GiB", "MB", "{} GiB", "MB"),
    ("hours", "seconds", "{} hour", "s"),
    ("weeks", "hours", "{} week", "hour"),
    ("atm", "kPa", "{} atm", "kPa"),
    ("mm", "inches", "{} mm", "inch"),
    ("mile^2", "km^2", "{} mile^2", "km^2"),
    ("°F", "°C", "tempF({})", "tempC"),
    ("°C", "°F", "tempC({})", "tempF"),
];

fn unit_cases(rng: &mut Rng) -> Vec<Case> {
    let mut out = Vec::new();
    for i in 0..60 {
        let (from, to, have, want) = CONVERSIONS[i % CONVERSIONS.len()];
        let amount = number(rng, 500);
        let typed = match rng.below(3) {
            0 => format!("{amount} {from} to {to}"),
            1 => format!("{amount} {from} in {to}"),
            _ => format!("convert {amount} {from} to {to}"),
        };
        out.push(Case {
            expression: typed,
            check: Check::Units {
                have: have.replace("{}", &amount),
                want: want.to_string(),
            },
        });
    }
    out
}

/// Python's answers to every query, in order.
fn python(queries: &[&Value]) -> Vec<Value> {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/reference/calculator_reference.py"
    );
    let mut child = Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("python3 is needed for the calculator's reference; install it");
    {
        let mut stdin = child.stdin.take().expect("stdin");
        for q in queries {
            writeln!(stdin, "{q}").expect("write a query");
        }
    }
    let out = child.wait_with_output().expect("python3 ran");
    assert!(out.status.success(), "the Python reference failed");
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("an answer is JSON"))
        .collect()
}

/// GNU units' answer to one conversion.
fn units(have: &str, want: &str) -> f64 {
    let out = Command::new("units")
        .args(["--terse", "--digits", "15", "--", have, want])
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "GNU units is needed for the calculator's reference ({e}); `cargo xtask test` \
                 installs it, or: sudo apt-get install units"
            )
        });
    let text = String::from_utf8_lossy(&out.stdout);
    text.trim()
        .parse()
        .unwrap_or_else(|_| panic!("units {have:?} {want:?} said {text:?}"))
}

/// The leading number of an answer: "8.04672 km", "approx. 0.33", "25%".
fn leading_number(answer: &str) -> Option<f64> {
    let s = answer.trim().trim_start_matches("approx.").trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | ',' | 'e')))
        .unwrap_or(s.len());
    s[..end].replace(',', "").parse().ok()
}

fn close(a: f64, b: f64, relative: f64) -> bool {
    (a - b).abs() <= relative * a.abs().max(b.abs()).max(1e-9)
}

/// "51 weeks and 1 day", "-(1 year, 2 months and 3 days)", "-358 days":
/// each unit's count, and the sign.
fn components(answer: &str) -> Option<(i64, BTreeMap<String, i64>)> {
    let (sign, body) = match answer.strip_prefix("-(") {
        Some(rest) => (-1, rest.strip_suffix(')')?),
        None => match answer.strip_prefix('-') {
            Some(rest) => (-1, rest),
            None => (1, answer),
        },
    };
    let mut parts = BTreeMap::new();
    for part in body.split(", ").flat_map(|p| p.split(" and ")) {
        let (n, unit) = part.trim().split_once(' ')?;
        let unit = unit.trim_end_matches('s').to_string() + "s";
        parts.insert(unit, n.parse().ok()?);
    }
    Some((sign, parts))
}

fn reference_components(reference: &Value) -> (i64, BTreeMap<String, i64>) {
    let mut parts = BTreeMap::new();
    let mut sign = 1;
    for (k, v) in reference.as_object().expect("an object") {
        let n = v.as_i64().expect("a count");
        if k == "sign" {
            sign = n;
        } else if n != 0 {
            parts.insert(k.clone(), n);
        }
    }
    (sign, parts)
}

/// "Friday, 19 February 2027" as (ISO date, weekday).
fn date_of(answer: &str) -> Option<(String, String)> {
    let (weekday, rest) = answer.split_once(", ")?;
    let words: Vec<&str> = rest.split_whitespace().collect();
    let [d, month, y] = words.as_slice() else {
        return None;
    };
    let m = MONTHS.iter().position(|x| x == month)? + 1;
    Some((
        format!(
            "{:04}-{m:02}-{:02}",
            y.parse::<i64>().ok()?,
            d.parse::<u32>().ok()?
        ),
        weekday.to_string(),
    ))
}

/// Whether Hearth's `answer` is the reference's, and if not, why.
fn compare(answer: &str, reference: &Value, query: &Value) -> Result<(), String> {
    match query["kind"].as_str() {
        Some("diff") => {
            let (sign, parts) = components(answer).ok_or("not a duration")?;
            let (want_sign, want) = reference_components(reference);
            let parts: BTreeMap<String, i64> = parts.into_iter().filter(|(_, n)| *n != 0).collect();
            let same_sign = sign == want_sign || want.is_empty();
            (same_sign && parts == want)
                .then_some(())
                .ok_or_else(|| format!("expected {reference}"))
        }
        Some("shift") => {
            let got = date_of(answer).ok_or("not a date")?;
            let want = (
                reference["date"].as_str().unwrap_or_default().to_string(),
                reference["weekday"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            );
            (got == want)
                .then_some(())
                .ok_or_else(|| format!("expected {} ({})", want.0, want.1))
        }
        _ => {
            let got = leading_number(answer).ok_or("not a number")?;
            let want: f64 = reference["value"]
                .as_str()
                .and_then(|v| v.parse().ok())
                .ok_or("no reference value")?;
            // fend shows a repeating decimal to ten places.
            close(got, want, 1e-8)
                .then_some(())
                .ok_or_else(|| format!("expected {want}"))
        }
    }
}

#[test]
fn the_calculator_agrees_with_python_and_gnu_units() {
    let mut rng = Rng(0x5EED_CA1C_2026_1121);
    let mut cases = date_cases(&mut rng);
    cases.extend(percent_cases(&mut rng));
    cases.extend(unit_cases(&mut rng));
    assert!(cases.len() >= 200, "{} cases", cases.len());

    let queries: Vec<&Value> = cases
        .iter()
        .filter_map(|c| match &c.check {
            Check::Python(q) => Some(q),
            Check::Units { .. } => None,
        })
        .collect();
    let mut answers = python(&queries).into_iter();
    let mut wrong = Vec::new();
    for case in &cases {
        let ours = evaluate(&case.expression, CLOCK)
            .map(|c| c.result)
            .map_err(|e| e.to_string());
        let verdict = match &case.check {
            Check::Python(query) => {
                let reference = answers.next().expect("an answer for every query");
                ours.clone()
                    .and_then(|answer| compare(&answer, &reference, query))
            }
            Check::Units { have, want } => {
                let reference = units(have, want);
                ours.clone().and_then(|answer| {
                    let got = leading_number(&answer).ok_or("not a number")?;
                    close(got, reference, 1e-6)
                        .then_some(())
                        .ok_or_else(|| format!("GNU units says {reference}"))
                })
            }
        };
        if let Err(why) = verdict {
            wrong.push(format!("{:?} → {:?}: {why}", case.expression, ours));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} expressions disagree with their reference:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
}
