//! Dates in the calculator, as people type them: how far one date is from
//! another (`2026-12-25 - 2026-01-01`, "days between A and B", "from A to
//! B", "days until B", "weeks since A"), answered as a duration in the unit
//! asked, and a date moved by an amount ("today + 90 days", "3 weeks before
//! 2027-01-10", "90 days from today"). A date is written in ISO form
//! (2026-12-25, or fend's `@2026-12-25`), spelled ("25 December 2026",
//! "Dec 25, 2026", "March 1"), or as today, tomorrow, yesterday or a
//! weekday. A date used as a plain number is an error that says so, never
//! a silent number.

use crate::util::dates::{Date, days_from_civil, days_in_month};

/// A unit a duration between dates is given in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Seconds,
    Minutes,
    Hours,
    Days,
    Weeks,
    Months,
    Years,
}

impl Unit {
    /// The unit a word names: "days", "week", "yrs".
    pub fn from_word(word: &str) -> Option<Unit> {
        Some(match word {
            "second" | "seconds" | "sec" | "secs" => Unit::Seconds,
            "minute" | "minutes" | "min" | "mins" => Unit::Minutes,
            "hour" | "hours" | "hr" | "hrs" => Unit::Hours,
            "day" | "days" => Unit::Days,
            "week" | "weeks" | "wk" | "wks" => Unit::Weeks,
            "month" | "months" | "mo" | "mos" => Unit::Months,
            "year" | "years" | "yr" | "yrs" => Unit::Years,
            _ => return None,
        })
    }

    fn names(self) -> (&'static str, &'static str) {
        match self {
            Unit::Seconds => ("second", "seconds"),
            Unit::Minutes => ("minute", "minutes"),
            Unit::Hours => ("hour", "hours"),
            Unit::Days => ("day", "days"),
            Unit::Weeks => ("week", "weeks"),
            Unit::Months => ("month", "months"),
            Unit::Years => ("year", "years"),
        }
    }
}

/// "1 day", "358 days", "-1 day".
pub fn count(n: i64, unit: Unit) -> String {
    let (one, many) = unit.names();
    format!("{n} {}", if n.abs() == 1 { one } else { many })
}

/// How a date without a year (or a weekday) is placed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// The next such day from today on ("until March 1", "until friday").
    Next,
    /// The last such day before today ("since March 1", "since friday").
    Last,
    /// In this year ("between March 1 and June 1").
    ThisYear,
}

/// Evaluates `expression` when it is about dates: `None` when it is not,
/// so the general calculator takes it.
pub fn evaluate(expression: &str, today: Date) -> Option<Result<String, String>> {
    let text = normalize(expression);
    let text = text.as_str();
    if text.is_empty() {
        return None;
    }
    if let Some(answer) = question(text, today) {
        return Some(answer);
    }
    if let Some(answer) = difference(text, today) {
        return Some(answer);
    }
    if let Some(answer) = shifted(text, today) {
        return Some(answer);
    }
    if let Ok(date) = parse_date(text, today, Place::Next) {
        return Some(Ok(format_date(date)));
    }
    date_as_number(expression).map(Err)
}

/// Lower case, single spaces, the question around it gone.
fn normalize(expression: &str) -> String {
    let mut s = expression
        .trim()
        .trim_end_matches(['?', '.', '!'])
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase();
    for lead in [
        "what is ",
        "what's ",
        "what date is ",
        "what day is ",
        "how many ",
        "how much time ",
        "the number of ",
        "number of ",
        "count the ",
        "count ",
    ] {
        if let Some(rest) = s.strip_prefix(lead) {
            s = rest.to_string();
            break;
        }
    }
    s
}

/// "days between A and B", "weeks from A to B", "months until B", "years
/// since A", "from A to B", "until B", "A to B", each with an optional
/// "in weeks" after it.
fn question(text: &str, today: Date) -> Option<Result<String, String>> {
    let (text, asked) = match unit_after(text) {
        Some((rest, unit)) => (rest, Some(unit)),
        None => (text, None),
    };
    let (unit, rest) = match text.split_once(' ') {
        Some((first, rest)) if Unit::from_word(first).is_some() => {
            (Unit::from_word(first), strip_fillers(rest))
        }
        _ => (None, text),
    };
    let unit = asked.or(unit);
    // Each side as typed, and how a side without a year is placed.
    let sides: (Option<&str>, Option<&str>, Place) = if let Some(r) = rest.strip_prefix("between ")
    {
        let (a, b) = r.split_once(" and ")?;
        (Some(a), Some(b), Place::ThisYear)
    } else if let Some(r) = rest.strip_prefix("from ") {
        match split_to(r) {
            Some((a, b)) => (Some(a), Some(b), Place::ThisYear),
            // "days from A" alone reads as "since A".
            None if unit.is_some() => (Some(r), None, Place::Last),
            None => return None,
        }
    } else if let Some(r) = ["until ", "till ", "til ", "to ", "before "]
        .iter()
        .find_map(|w| rest.strip_prefix(w))
    {
        (None, Some(r), Place::Next)
    } else if let Some(r) = ["since ", "after "]
        .iter()
        .find_map(|w| rest.strip_prefix(w))
    {
        (Some(r), None, Place::Last)
    } else {
        // "A to B": both sides must be dates, or this is fend's "to".
        let (a, b) = split_to(rest)?;
        (Some(a), Some(b), Place::ThisYear)
    };
    let (a, b, place) = sides;
    let side = |s: Option<&str>| match s {
        Some(s) => parse_date(s, today, place),
        None => Ok(today),
    };
    match (side(a), side(b)) {
        (Ok(from), Ok(to)) => Some(Ok(duration(from, to, unit.unwrap_or(Unit::Days)))),
        // A unit was asked, or one side is a date: this is about dates, and
        // the side that is not one is worth saying. Otherwise other
        // readings stay open.
        (Err(e), Ok(_)) | (Ok(_), Err(e)) if unit.is_some() || a.is_none() || b.is_none() => {
            Some(Err(e))
        }
        (Err(e), Ok(_)) | (Ok(_), Err(e)) => {
            if rest.starts_with("between ") || rest.starts_with("from ") {
                Some(Err(e))
            } else {
                None
            }
        }
        (Err(e), Err(_)) if unit.is_some() => Some(Err(e)),
        (Err(_), Err(_)) => None,
    }
}

/// An " in weeks" (or " to weeks", " as weeks") at the end: the rest and
/// the unit.
fn unit_after(text: &str) -> Option<(&str, Unit)> {
    let (rest, last) = text.rsplit_once(' ')?;
    let unit = Unit::from_word(last)?;
    let rest = [" in whole", " in", " to", " as"]
        .iter()
        .find_map(|w| rest.strip_suffix(w))?
        .trim_end();
    (!rest.is_empty()).then_some((rest, unit))
}

/// "are there", "is it", "left", "have passed", "has it been" and such
/// between the unit and the dates.
fn strip_fillers(text: &str) -> &str {
    const FILLERS: [&str; 14] = [
        "are",
        "there",
        "is",
        "it",
        "left",
        "remaining",
        "remain",
        "have",
        "has",
        "been",
        "passed",
        "gone",
        "are left",
        "will",
    ];
    let mut rest = text;
    loop {
        let Some((first, tail)) = rest.split_once(' ') else {
            return rest;
        };
        if FILLERS.contains(&first) {
            rest = tail;
        } else {
            return rest;
        }
    }
}

/// "A to B", "A until B", "A through B": the two sides.
fn split_to(text: &str) -> Option<(&str, &str)> {
    [" to ", " until ", " till ", " through ", " and "]
        .iter()
        .find_map(|w| text.split_once(w))
}

/// `A - B` where both are dates: the days from B to A.
fn difference(text: &str, today: Date) -> Option<Result<String, String>> {
    let (text, unit) = match unit_after(text) {
        Some((rest, unit)) => (rest, unit),
        None => (text, Unit::Days),
    };
    let text = strip_brackets(text);
    for (i, _) in text.match_indices('-') {
        let (a, b) = (text[..i].trim(), text[i + 1..].trim());
        if a.is_empty() || b.is_empty() {
            continue;
        }
        if let (Ok(a), Ok(b)) = (
            parse_date(a, today, Place::ThisYear),
            parse_date(b, today, Place::ThisYear),
        ) {
            return Some(Ok(duration(b, a, unit)));
        }
    }
    None
}

fn strip_brackets(text: &str) -> &str {
    text.strip_prefix('(')
        .and_then(|t| t.strip_suffix(')'))
        .unwrap_or(text)
}

/// An amount of calendar time: "90 days", "a week", "2 months and 3 days".
fn amount(text: &str) -> Option<Vec<(i64, Unit)>> {
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty() && *w != "and" && *w != "+")
        .collect();
    if words.is_empty() || !words.len().is_multiple_of(2) {
        return None;
    }
    let mut out = Vec::new();
    for pair in words.chunks(2) {
        let n: i64 = match pair[0] {
            "a" | "an" | "one" => 1,
            other => other.parse().ok()?,
        };
        let unit = Unit::from_word(pair[1])?;
        if matches!(unit, Unit::Seconds | Unit::Minutes | Unit::Hours) {
            return None;
        }
        out.push((n, unit));
    }
    Some(out)
}

/// A date moved: "A + 90 days", "A - 2 weeks + 1 day", "90 days from A",
/// "3 weeks before A", "2 months after A", "5 days ago".
fn shifted(text: &str, today: Date) -> Option<Result<String, String>> {
    if let Some(rest) = text.strip_suffix(" ago")
        && let Some(steps) = amount(rest)
    {
        let steps: Vec<(i64, (i64, Unit))> = steps.into_iter().map(|s| (-1, s)).collect();
        return Some(move_by(today, &steps).map(format_date));
    }
    for (word, sign) in [
        (" from ", 1),
        (" after ", 1),
        (" later than ", 1),
        (" before ", -1),
        (" earlier than ", -1),
    ] {
        if let Some((q, d)) = text.split_once(word)
            && let Some(steps) = amount(q)
        {
            let steps: Vec<(i64, (i64, Unit))> = steps.into_iter().map(|s| (sign, s)).collect();
            return Some(
                parse_date(d, today, Place::ThisYear)
                    .and_then(|d| move_by(d, &steps))
                    .map(format_date),
            );
        }
    }
    // "A + 1 month - 2 days": a start that is a date, then signed amounts.
    for (i, _) in text.match_indices([' ', '+', '-']) {
        let (head, tail) = (text[..i].trim(), text[i..].trim());
        if head.is_empty() || !(tail.starts_with('+') || tail.starts_with('-')) {
            continue;
        }
        let Ok(date) = parse_date(head, today, Place::ThisYear) else {
            continue;
        };
        let Some(steps) = signed_amounts(tail) else {
            continue;
        };
        return Some(move_by(date, &steps).map(format_date));
    }
    None
}

/// "+ 90 days - 1 week": each amount with its sign.
fn signed_amounts(text: &str) -> Option<Vec<(i64, (i64, Unit))>> {
    let mut out = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        let sign = match rest.as_bytes()[0] {
            b'+' => 1,
            b'-' => -1,
            _ => return None,
        };
        rest = rest[1..].trim_start();
        let end = rest.find(['+', '-']).unwrap_or(rest.len());
        let steps = amount(rest[..end].trim())?;
        out.extend(steps.into_iter().map(|s| (sign, s)));
        rest = rest[end..].trim_start();
    }
    (!out.is_empty()).then_some(out)
}

/// The farthest a date is moved, in days either way (about 2,700 years).
const MAX_SHIFT_DAYS: i64 = 1_000_000;

/// `date` moved by each signed step in turn.
fn move_by(date: Date, steps: &[(i64, (i64, Unit))]) -> Result<Date, String> {
    let mut d = date;
    for &(sign, (n, unit)) in steps {
        let days = match unit {
            Unit::Days => n,
            Unit::Weeks => n.saturating_mul(7),
            Unit::Months => n.saturating_mul(31),
            Unit::Years => n.saturating_mul(366),
            Unit::Seconds | Unit::Minutes | Unit::Hours => 0,
        };
        if days.abs() > MAX_SHIFT_DAYS {
            return Err("that is too far from any date".into());
        }
        let n = n * sign;
        d = match unit {
            Unit::Days => d.plus_days(n),
            Unit::Weeks => d.plus_days(7 * n),
            Unit::Months => add_months(d, n),
            Unit::Years => add_months(d, 12 * n),
            Unit::Seconds | Unit::Minutes | Unit::Hours => d,
        };
        if (days_of(d) - days_of(date)).abs() > MAX_SHIFT_DAYS {
            return Err("that is too far from any date".into());
        }
    }
    Ok(d)
}

/// `months` calendar months later, the day kept or, where the month is
/// shorter, its last day (31 January + 1 month = 28 or 29 February).
pub fn add_months(date: Date, months: i64) -> Date {
    let total = date.year * 12 + i64::from(date.month - 1) + months;
    let year = total.div_euclid(12);
    let month = (total.rem_euclid(12) + 1) as u32;
    Date {
        year,
        month,
        day: date.day.min(days_in_month(year, month)),
    }
}

fn days_of(d: Date) -> i64 {
    days_from_civil(d.year, d.month, d.day)
}

/// The time from `from` to `to` in `unit`: whole units and what is left
/// over in days ("51 weeks and 1 day", "1 year, 2 months and 3 days");
/// negative when `to` comes first.
pub fn duration(from: Date, to: Date, unit: Unit) -> String {
    let days = days_of(to) - days_of(from);
    match unit {
        Unit::Days => count(days, unit),
        Unit::Hours => count(days * 24, unit),
        Unit::Minutes => count(days * 1_440, unit),
        Unit::Seconds => count(days * 86_400, unit),
        Unit::Weeks | Unit::Months | Unit::Years => {
            let (sign, from, to) = if days < 0 {
                ("-", to, from)
            } else {
                ("", from, to)
            };
            let parts = match unit {
                Unit::Weeks => {
                    let d = days.abs();
                    vec![(d / 7, Unit::Weeks), (d % 7, Unit::Days)]
                }
                _ => {
                    let months = whole_months(from, to);
                    let left = days_of(to) - days_of(add_months(from, months));
                    if unit == Unit::Years {
                        vec![
                            (months / 12, Unit::Years),
                            (months % 12, Unit::Months),
                            (left, Unit::Days),
                        ]
                    } else {
                        vec![(months, Unit::Months), (left, Unit::Days)]
                    }
                }
            };
            let shown: Vec<String> = parts
                .iter()
                .filter(|(n, _)| *n != 0)
                .map(|&(n, u)| count(n, u))
                .collect();
            let text = match shown.as_slice() {
                [] => return count(0, unit),
                [one] => return format!("{sign}{one}"),
                [init @ .., last] => format!("{} and {last}", init.join(", ")),
            };
            if sign.is_empty() {
                text
            } else {
                format!("-({text})")
            }
        }
    }
}

/// The most whole calendar months from `from` that do not pass `to`
/// (`from` ≤ `to`).
fn whole_months(from: Date, to: Date) -> i64 {
    let mut m = (to.year - from.year) * 12 + i64::from(to.month) - i64::from(from.month);
    while m > 0 && add_months(from, m) > to {
        m -= 1;
    }
    while add_months(from, m + 1) <= to {
        m += 1;
    }
    m
}

/// A date as typed, placed as `place` says when it has no year.
fn parse_date(text: &str, today: Date, place: Place) -> Result<Date, String> {
    let text = text
        .trim()
        .trim_start_matches('@')
        .trim_start_matches("the ")
        .trim_end_matches(',');
    let date = Date::parse(text, today)?;
    let words: Vec<&str> = text
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .collect();
    let month_day = words.len() == 2 && words.iter().any(|w| Date::is_month(w));
    let weekday = Date::is_weekday(words.last().copied().unwrap_or_default())
        && (words.len() == 1 || (words.len() == 2 && words[0] == "next"));
    Ok(match place {
        Place::Next => date,
        Place::Last if month_day && date >= today => {
            Date::new(date.year - 1, date.month, date.day).unwrap_or(date)
        }
        Place::Last if weekday => date.plus_days(-7),
        Place::ThisYear if month_day => Date::new(today.year, date.month, date.day).unwrap_or(date),
        Place::Last | Place::ThisYear => date,
    })
}

/// "Saturday, 21 November 2026".
pub fn format_date(d: Date) -> String {
    const WEEKDAYS: [&str; 7] = [
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
    ];
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
    format!(
        "{}, {} {} {}",
        WEEKDAYS[d.weekday()],
        d.day,
        MONTHS[(d.month - 1) as usize],
        d.year
    )
}

/// A date in an expression that is not about dates, used as a number
/// (`2026-12-25 * 2`, `12/25/2026 + 1`, `today * 3`): what to say.
fn date_as_number(expression: &str) -> Option<String> {
    let lower = expression.to_lowercase();
    let words = lower.split(|c: char| !(c.is_alphanumeric() || c == '-' || c == '/' || c == '@'));
    for word in words {
        let word = word.trim_matches('-');
        let bare = word.trim_start_matches('@');
        if is_iso_like(bare) {
            let what = if Date::parse(bare, Date::from_tuple((2000, 1, 1))).is_ok() {
                format!("{bare} is a date")
            } else {
                format!("{bare} looks like a date but is not one")
            };
            return Some(format!(
                "{what}, and here it is used as a number. To count the days between dates, \
                 write 2026-12-25 - 2026-01-01 or days between 2026-01-01 and 2026-12-25; \
                 to move a date, add a unit, e.g. 2026-12-25 + 5 days"
            ));
        }
        if is_slash_date(bare) {
            return Some(format!(
                "{bare} looks like a date, and here it is used as a number. \
                 Write dates as 2026-12-25 or 25 December 2026"
            ));
        }
        if matches!(bare, "today" | "tomorrow" | "yesterday") {
            return Some(format!(
                "{bare} is a date, and here it is used as a number. Add or take away a unit \
                 (today + 90 days), or ask for days until or since a date"
            ));
        }
    }
    None
}

/// `2026-12-25`, `2026-1-5`, `2026-13-45`: four digits, then one or two,
/// then one or two, joined by hyphens.
fn is_iso_like(word: &str) -> bool {
    let parts: Vec<&str> = word.split('-').collect();
    parts.len() == 3
        && parts[0].len() == 4
        && (1..=2).contains(&parts[1].len())
        && (1..=2).contains(&parts[2].len())
        && parts.iter().all(|p| p.bytes().all(|b| b.is_ascii_digit()))
}

/// `12/25/2026`, `25/12/26`: day and month, then a year.
fn is_slash_date(word: &str) -> bool {
    let parts: Vec<&str> = word.split('/').collect();
    parts.len() == 3
        && (1..=2).contains(&parts[0].len())
        && (1..=2).contains(&parts[1].len())
        && (parts[2].len() == 4 || parts[2].len() == 2)
        && parts.iter().all(|p| p.bytes().all(|b| b.is_ascii_digit()))
        && parts[0].parse::<u32>().is_ok_and(|n| (1..=31).contains(&n))
        && parts[1].parse::<u32>().is_ok_and(|n| (1..=31).contains(&n))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Saturday 21 November 2026.
    const TODAY: Date = Date {
        year: 2026,
        month: 11,
        day: 21,
    };

    fn calc(text: &str) -> String {
        match evaluate(text, TODAY) {
            Some(Ok(s)) => s,
            Some(Err(e)) => format!("error: {e}"),
            None => "not about dates".into(),
        }
    }

    #[test]
    fn differences_in_the_forms_people_type() {
        let cases = [
            ("2026-12-25 - 2026-01-01", "358 days"),
            ("2026-01-01 - 2026-12-25", "-358 days"),
            ("days between 2026-01-01 and 2026-12-25", "358 days"),
            (
                "How many days between 2026-01-01 and 2026-12-25?",
                "358 days",
            ),
            ("from 2026-01-01 to 2026-12-25", "358 days"),
            ("2026-01-01 to 2026-12-25", "358 days"),
            ("days until 2026-12-25", "34 days"),
            ("how many days are left until Dec 25", "34 days"),
            (
                "days until christmas day",
                "error: 'christmas day' is not a date; use YYYY-MM-DD, e.g. 2026-12-24, or 'tomorrow'",
            ),
            ("weeks since 2026-01-01", "46 weeks and 2 days"),
            ("weeks between 2026-01-01 and 2026-01-15", "2 weeks"),
            ("weeks between 2026-01-15 and 2026-01-01", "-2 weeks"),
            (
                "weeks between 2026-01-20 and 2026-01-01",
                "-(2 weeks and 5 days)",
            ),
            ("months between 2026-01-31 and 2026-02-28", "1 month"),
            (
                "months between 2026-01-15 and 2026-03-14",
                "1 month and 27 days",
            ),
            ("years since 1990-05-17", "36 years, 6 months and 4 days"),
            ("years between 2000-02-29 and 2001-02-28", "1 year"),
            ("hours between 2026-01-01 and 2026-01-02", "24 hours"),
            (
                "days between 25 December 2025 and December 25, 2026",
                "365 days",
            ),
            ("days between March 1 and June 1", "92 days"),
            ("days since March 1", "265 days"),
            ("days until March 1", "100 days"),
            ("days since friday", "1 day"),
            ("days until friday", "6 days"),
            ("days until tomorrow", "1 day"),
            (
                "from 2026-01-01 to 2026-12-25 in weeks",
                "51 weeks and 1 day",
            ),
            ("@2026-12-25 - today", "34 days"),
            ("today - tomorrow", "-1 day"),
            ("until 2027-01-01", "41 days"),
            ("days from 2026-11-01", "20 days"),
        ];
        for (text, want) in cases {
            assert_eq!(calc(text), want, "{text}");
        }
    }

    #[test]
    fn dates_moved_by_amounts() {
        let cases = [
            ("today", "Saturday, 21 November 2026"),
            ("today + 90 days", "Friday, 19 February 2027"),
            ("90 days from today", "Friday, 19 February 2027"),
            ("2026-12-25 + 5 days", "Wednesday, 30 December 2026"),
            ("25 December 2026 - 2 weeks", "Friday, 11 December 2026"),
            ("3 weeks before 2027-01-10", "Sunday, 20 December 2026"),
            ("2027-01-31 + 1 month", "Sunday, 28 February 2027"),
            ("today + 1 year - 1 day", "Saturday, 20 November 2027"),
            ("5 days ago", "Monday, 16 November 2026"),
            (
                "2 months and 3 days after 2026-01-31",
                "Friday, 3 April 2026",
            ),
            (
                "today + 9999999 days",
                "error: that is too far from any date",
            ),
        ];
        for (text, want) in cases {
            assert_eq!(calc(text), want, "{text}");
        }
    }

    #[test]
    fn a_date_used_as_a_number_is_an_error() {
        for text in [
            "2026-12-25 * 2",
            "2026-12-25 + 5",
            "1 + 2026-12-25",
            "12/25/2026 + 1",
            "today * 3",
            "2026-13-45 + 1",
        ] {
            let got = calc(text);
            assert!(got.starts_with("error: "), "{text}: {got}");
            assert!(got.contains("used as a number"), "{text}: {got}");
        }
        assert!(calc("2026-13-45 + 1").contains("looks like a date but is not one"));
        for text in [
            "2 + 2",
            "5 miles to km",
            "15% of 847",
            "10 - 3",
            "2026 - 12",
        ] {
            assert_eq!(calc(text), "not about dates", "{text}");
        }
    }
}
