//! Calendar dates as people write and read them: `YYYY-MM-DD` on the wire,
//! phrases such as "tomorrow", "next friday", "in 2 weeks" or "March 1"
//! typed in the composer, and "15 Jan 2030" on cards.

use serde::{Deserialize, Serialize};

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// Monday first, as weeks are read.
const WEEKDAYS: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// Words that may come before a date: "due friday", "by March 1".
const LEADS: [&str; 4] = ["on", "by", "due", "before"];

/// A calendar date, `YYYY-MM-DD` in JSON, compared as a date.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Date {
    pub year: i64,
    pub month: u32,
    pub day: u32,
}

impl Date {
    pub fn new(year: i64, month: u32, day: u32) -> Option<Date> {
        ((1..=12).contains(&month) && day >= 1 && day <= days_in_month(year, month))
            .then_some(Date { year, month, day })
    }

    pub fn from_tuple((year, month, day): (i64, u32, u32)) -> Date {
        Date { year, month, day }
    }

    fn days(self) -> i64 {
        days_from_civil(self.year, self.month, self.day)
    }

    pub fn plus_days(self, n: i64) -> Date {
        Date::from_tuple(civil_from_days(self.days() + n))
    }

    /// 0 for Monday … 6 for Sunday.
    pub fn weekday(self) -> usize {
        // 1970-01-01 was a Thursday.
        (self.days() + 3).rem_euclid(7) as usize
    }

    /// "15 Jan 2030".
    pub fn words(self) -> String {
        let month = &MONTHS[(self.month - 1) as usize][..3];
        let mut m = month.to_string();
        m[..1].make_ascii_uppercase();
        format!("{} {m} {}", self.day, self.year)
    }

    /// Reads a date written the way people write one, against `today`:
    /// `2026-12-24`, `today`, `tomorrow`, `yesterday`, a weekday (the next
    /// one after today, "next" allowed), `in 3 days`, `in 2 weeks`,
    /// `in a week`, and a day and month in either order with an optional
    /// year (`March 1`, `1 mar 2027`; without a year, the next such day).
    /// A leading "on", "by", "due" or "before" is allowed.
    pub fn parse(text: &str, today: Date) -> Result<Date, String> {
        let bad =
            || format!("'{text}' is not a date; use YYYY-MM-DD, e.g. 2026-12-24, or 'tomorrow'");
        let lower = text.trim().to_lowercase();
        let mut words: Vec<&str> = lower
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|w| !w.is_empty())
            .collect();
        if words.len() > 1 && LEADS.contains(&words[0]) {
            words.remove(0);
        }
        match words.as_slice() {
            ["today" | "tonight"] => Ok(today),
            ["tomorrow"] => Ok(today.plus_days(1)),
            ["yesterday"] => Ok(today.plus_days(-1)),
            [day] | ["next", day] if weekday(day).is_some() => {
                let want = weekday(day).unwrap_or_default() as i64;
                let ahead = (want - today.weekday() as i64 - 1).rem_euclid(7) + 1;
                Ok(today.plus_days(ahead))
            }
            ["in", n, unit] => {
                let n: i64 = match *n {
                    "a" | "an" | "one" => 1,
                    other => other.parse().map_err(|_| bad())?,
                };
                if !(0..=3_650).contains(&n) {
                    return Err(bad());
                }
                match unit.trim_end_matches('s') {
                    "day" => Ok(today.plus_days(n)),
                    "week" => Ok(today.plus_days(7 * n)),
                    _ => Err(bad()),
                }
            }
            [iso] if iso.contains('-') => iso_date(iso).ok_or_else(bad),
            [a, b] | [a, b, _] => {
                let year = match words.get(2) {
                    Some(y) => Some(y.parse::<i64>().map_err(|_| bad())?),
                    None => None,
                };
                let (month, day) = match (month(a), month(b)) {
                    (Some(m), None) => (m, day_number(b).ok_or_else(bad)?),
                    (None, Some(m)) => (m, day_number(a).ok_or_else(bad)?),
                    _ => return Err(bad()),
                };
                match year {
                    Some(y) => Date::new(y, month, day).ok_or_else(bad),
                    None => {
                        let this_year = Date::new(today.year, month, day);
                        match this_year {
                            Some(d) if d >= today => Ok(d),
                            _ => Date::new(today.year + 1, month, day).ok_or_else(bad),
                        }
                    }
                }
            }
            _ => Err(bad()),
        }
    }

    /// Whether `word` names a weekday ("friday", "Fri").
    pub fn is_weekday(word: &str) -> bool {
        weekday(&word.to_lowercase()).is_some()
    }

    /// Whether `word` names a month ("march", "Dec", "sept.").
    pub fn is_month(word: &str) -> bool {
        month(&word.to_lowercase()).is_some()
    }

    /// Whether `text` reads as a date, whatever today is.
    pub fn is_phrase(text: &str) -> bool {
        Date::parse(text, Date::from_tuple((2000, 1, 1))).is_ok()
    }
}

fn weekday(word: &str) -> Option<usize> {
    WEEKDAYS
        .iter()
        .position(|d| word.len() >= 3 && d.starts_with(word))
}

fn month(word: &str) -> Option<u32> {
    let word = word.trim_end_matches('.');
    MONTHS
        .iter()
        .position(|m| *m == word || (word.len() >= 3 && m.starts_with(word)))
        .map(|i| i as u32 + 1)
}

fn day_number(word: &str) -> Option<u32> {
    let digits = word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &word[digits.len()..];
    if !matches!(suffix, "" | "st" | "nd" | "rd" | "th") {
        return None;
    }
    digits.parse().ok().filter(|d| (1..=31).contains(d))
}

fn iso_date(s: &str) -> Option<Date> {
    let mut parts = s.split('-');
    let year: i64 = parts.next()?.parse().ok()?;
    let month: u32 = parts.next()?.parse().ok()?;
    let day: u32 = parts.next()?.parse().ok()?;
    if parts.next().is_some() {
        return None;
    }
    Date::new(year, month, day)
}

impl TryFrom<String> for Date {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        iso_date(&s).ok_or_else(|| format!("'{s}' is not a date; use YYYY-MM-DD, e.g. 2026-12-24"))
    }
}

impl From<Date> for String {
    fn from(d: Date) -> String {
        format!("{:04}-{:02}-{:02}", d.year, d.month, d.day)
    }
}

/// Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
pub(crate) fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// A civil date to days since 1970-01-01.
pub(crate) fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// How many days month `m` of year `y` has.
pub(crate) fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
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

    #[test]
    fn phrases_people_type() {
        let cases = [
            ("2026-12-24", Ok("2026-12-24")),
            ("today", Ok("2026-11-21")),
            ("Tomorrow", Ok("2026-11-22")),
            ("yesterday", Ok("2026-11-20")),
            ("by tomorrow", Ok("2026-11-22")),
            ("friday", Ok("2026-11-27")),
            ("next Friday", Ok("2026-11-27")),
            ("saturday", Ok("2026-11-28")),
            ("on mon", Ok("2026-11-23")),
            ("in 3 days", Ok("2026-11-24")),
            ("in a week", Ok("2026-11-28")),
            ("in 2 weeks", Ok("2026-12-05")),
            ("March 1", Ok("2027-03-01")),
            ("1 march", Ok("2027-03-01")),
            ("dec 24th", Ok("2026-12-24")),
            ("Nov 21", Ok("2026-11-21")),
            ("24 Dec 2030", Ok("2030-12-24")),
            ("due 2027-01-05", Ok("2027-01-05")),
            ("2026-02-30", Err(())),
            ("February 30", Err(())),
            ("soon", Err(())),
            ("in 3 fortnights", Err(())),
            ("buy milk", Err(())),
            ("", Err(())),
        ];
        for (text, want) in cases {
            let got = Date::parse(text, TODAY).map(String::from).map_err(|_| ());
            assert_eq!(got, want.map(str::to_string), "{text:?}");
        }
        assert_eq!(
            Date::parse("soon", TODAY),
            Err("'soon' is not a date; use YYYY-MM-DD, e.g. 2026-12-24, or 'tomorrow'".into())
        );
    }

    #[test]
    fn weekdays_and_words() {
        assert_eq!(TODAY.weekday(), 5);
        assert_eq!(TODAY.words(), "21 Nov 2026");
        assert_eq!(Date::from_tuple((2030, 1, 15)).words(), "15 Jan 2030");
        assert!(Date::is_phrase("next tuesday"));
        assert!(!Date::is_phrase("passport"));
    }

    #[test]
    fn civil_date_round_trips() {
        for days in [-800_000, -1, 0, 1, 59, 60, 365, 10_957, 20_778, 2_000_000] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(civil_from_days(0), (1970, 1, 1));
    }
}
