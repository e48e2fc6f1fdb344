//! The calculator skill: math, units, dates and percentages through
//! fend-core's parser. Nothing is ever evaluated as code.
//!
//! fend-core deliberately ships with the current date switched off, so the
//! words `today`, `now`, `tomorrow` and `yesterday` are rewritten to date
//! literals (`@2026-11-21`) from the clock the caller passes in.

use std::sync::atomic::{AtomicU32, Ordering};

use serde::{Deserialize, Serialize};

use crate::dates::{civil_from_days, days_from_civil, days_in_month};

/// The longest expression accepted; more is almost surely a mistake.
pub const MAX_EXPRESSION_LEN: usize = 1_000;

/// How many times fend may check in before a computation is stopped.
/// Ordinary expressions need a few dozen; `2^2^2^30` needs millions.
const INTERRUPT_BUDGET: u32 = 200_000;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Calculation {
    pub expression: String,
    pub result: String,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CalcError {
    #[error("the expression is empty")]
    Empty,
    #[error("the expression is too long ({0} characters; the limit is 1000)")]
    TooLong(usize),
    #[error("the calculation took too long and was stopped")]
    TooExpensive,
    #[error("cannot calculate '{expression}': {reason}")]
    Invalid { expression: String, reason: String },
}

/// The wall clock the calculator resolves `today` against.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Clock {
    pub unix_ms: f64,
    /// Minutes east of UTC, e.g. +60 for Paris in winter.
    pub utc_offset_minutes: i32,
}

impl Clock {
    /// The local civil date (year, month, day).
    pub fn local_date(self) -> (i64, u32, u32) {
        let local_ms = self.unix_ms + f64::from(self.utc_offset_minutes) * 60_000.0;
        let days = (local_ms / 86_400_000.0).floor() as i64;
        civil_from_days(days)
    }
}

/// Evaluates `expression`.
pub fn evaluate(expression: &str, clock: Clock) -> Result<Calculation, CalcError> {
    let trimmed = expression.trim();
    if trimmed.is_empty() {
        return Err(CalcError::Empty);
    }
    let chars = trimmed.chars().count();
    if chars > MAX_EXPRESSION_LEN {
        return Err(CalcError::TooLong(chars));
    }
    let prepared = resolve_relative_dates(trimmed, clock);
    if let Some(result) = date_arithmetic(&prepared) {
        return result
            .map(|result| Calculation {
                expression: trimmed.to_string(),
                result,
            })
            .map_err(|reason| CalcError::Invalid {
                expression: trimmed.to_string(),
                reason,
            });
    }
    let mut context = fend_core::Context::new();
    let interrupt = Budget {
        left: AtomicU32::new(INTERRUPT_BUDGET),
    };
    match fend_core::evaluate_with_interrupt(&prepared, &mut context, &interrupt) {
        Ok(result) => {
            let main = result.get_main_result().trim().to_string();
            if main.is_empty() {
                return Err(CalcError::Invalid {
                    expression: trimmed.to_string(),
                    reason: "it has no value".into(),
                });
            }
            Ok(Calculation {
                expression: trimmed.to_string(),
                result: main,
            })
        }
        Err(_) if interrupt.left.load(Ordering::Relaxed) == 0 => Err(CalcError::TooExpensive),
        Err(reason) => Err(CalcError::Invalid {
            expression: trimmed.to_string(),
            reason,
        }),
    }
}

/// The skill's entry point: `{"expression": "..."}` in, the calculation out.
pub fn run(
    arguments: &serde_json::Value,
    clock: Clock,
) -> Result<crate::SkillOutput, crate::SkillError> {
    let expression = arguments
        .get("expression")
        .and_then(serde_json::Value::as_str)
        .ok_or_else(|| crate::SkillError::new("'expression' must be a string"))?;
    let calc = evaluate(expression, clock).map_err(|e| crate::SkillError::new(e.to_string()))?;
    let text = calc.result.clone();
    let value = serde_json::json!({"expression": calc.expression, "result": calc.result});
    Ok(crate::SkillOutput::text_and_json(text, value))
}

struct Budget {
    left: AtomicU32,
}

impl fend_core::Interrupt for Budget {
    fn should_interrupt(&self) -> bool {
        let left = self.left.load(Ordering::Relaxed);
        if left == 0 {
            return true;
        }
        self.left.store(left - 1, Ordering::Relaxed);
        false
    }
}

/// Rewrites `today`, `now`, `tomorrow`, `yesterday` (whole words, outside
/// quotes) into fend date literals, plus the phrasing `N days from today`.
fn resolve_relative_dates(expr: &str, clock: Clock) -> String {
    let (y, m, d) = clock.local_date();
    let today_days = days_from_civil(y, m, d);
    let literal = |offset: i64| {
        let (y, m, d) = civil_from_days(today_days + offset);
        format!("@{y:04}-{m:02}-{d:02}")
    };
    let mut out = String::with_capacity(expr.len() + 16);
    let mut word = String::new();
    let mut in_quote = false;
    let flush = |word: &mut String, out: &mut String| {
        let replacement = match word.to_ascii_lowercase().as_str() {
            "today" | "now" => Some(literal(0)),
            "tomorrow" => Some(literal(1)),
            "yesterday" => Some(literal(-1)),
            _ => None,
        };
        match replacement {
            Some(r) => out.push_str(&r),
            None => out.push_str(word),
        }
        word.clear();
    };
    for c in expr.chars() {
        if c == '"' || c == '\'' {
            in_quote = !in_quote;
        }
        if !in_quote && (c.is_alphanumeric() || c == '_') {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    // "90 days from @2026-11-21" reads naturally but fend wants "+".
    rewrite_from_phrase(&out)
}

fn rewrite_from_phrase(s: &str) -> String {
    // "<quantity> from @date" -> "@date + <quantity>"; "<quantity> before @date" -> "@date - <quantity>"
    for (word, op) in [(" from @", '+'), (" after @", '+'), (" before @", '-')] {
        if let Some(pos) = s.find(word) {
            let quantity = s[..pos].trim();
            let rest = &s[pos + word.len() - 1..];
            let date_end = rest.find(' ').unwrap_or(rest.len());
            let (date, tail) = rest.split_at(date_end);
            if !quantity.is_empty() {
                return format!("{date} {op} ({quantity}){tail}");
            }
        }
    }
    s.to_string()
}

/// Calendar arithmetic fend lacks: `@date ± N days|weeks|months|years`
/// (chained) and `@date - @date`. Returns `None` when `expr` has another
/// shape, so fend handles it.
fn date_arithmetic(expr: &str) -> Option<Result<String, String>> {
    let tokens: Vec<&str> = expr.split_whitespace().collect();
    let (first, mut rest) = tokens.split_first()?;
    let (mut y, mut m, mut d) = parse_date_literal(first)?;
    if let [op, other] = rest
        && let Some((y2, m2, d2)) = parse_date_literal(other)
    {
        if *op != "-" {
            return Some(Err("two dates can only be subtracted".into()));
        }
        let days = days_from_civil(y, m, d) - days_from_civil(y2, m2, d2);
        let unit = if days.abs() == 1 { "day" } else { "days" };
        return Some(Ok(format!("{days} {unit}")));
    }
    if rest.is_empty() {
        return None;
    }
    while let [op, n, unit, tail @ ..] = rest {
        let sign = match *op {
            "+" => 1,
            "-" => -1,
            _ => return None,
        };
        let n: i64 = n.parse().ok()?;
        let n = n.checked_mul(sign)?;
        if n.abs() > 1_000_000 {
            return Some(Err("that is too far from any date".into()));
        }
        match unit.trim_end_matches('s') {
            "day" => (y, m, d) = civil_from_days(days_from_civil(y, m, d) + n),
            "week" => (y, m, d) = civil_from_days(days_from_civil(y, m, d) + 7 * n),
            "month" => (y, m, d) = add_months(y, m, d, n),
            "year" => (y, m, d) = add_months(y, m, d, 12 * n),
            _ => return None,
        }
        rest = tail;
    }
    if !rest.is_empty() {
        return None;
    }
    Some(Ok(format_date(y, m, d)))
}

fn parse_date_literal(token: &str) -> Option<(i64, u32, u32)> {
    let body = token.strip_prefix('@')?;
    let mut parts = body.split('-');
    let y: i64 = parts.next()?.parse().ok()?;
    let m: u32 = parts.next()?.parse().ok()?;
    let d: u32 = parts.next()?.parse().ok()?;
    if parts.next().is_some() || !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) {
        return None;
    }
    Some((y, m, d))
}

fn add_months(y: i64, m: u32, d: u32, months: i64) -> (i64, u32, u32) {
    let total = y * 12 + i64::from(m - 1) + months;
    let ny = total.div_euclid(12);
    let nm = (total.rem_euclid(12) + 1) as u32;
    (ny, nm, d.min(days_in_month(ny, nm)))
}

fn format_date(y: i64, m: u32, d: u32) -> String {
    const WEEKDAYS: [&str; 7] = [
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
        "Monday",
        "Tuesday",
        "Wednesday",
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
    let weekday = WEEKDAYS[days_from_civil(y, m, d).rem_euclid(7) as usize];
    format!("{weekday}, {d} {} {y}", MONTHS[(m - 1) as usize])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-11-21 12:00 UTC.
    const NOON: Clock = Clock {
        unix_ms: 1_795_262_400_000.0,
        utc_offset_minutes: 0,
    };

    fn calc(expr: &str) -> String {
        match evaluate(expr, NOON) {
            Ok(c) => c.result,
            Err(e) => format!("error: {e}"),
        }
    }

    #[test]
    fn expressions_and_their_results() {
        let cases = [
            ("15% of 847", "127.05"),
            ("2 + 2 * 3", "8"),
            ("(1 + 2) * 3", "9"),
            ("sqrt(16)", "4"),
            ("0.1 + 0.2", "0.3"),
            ("2^64", "18446744073709551616"),
            ("5 miles to km", "8.04672 km"),
            ("1 GiB to MB", "1073.741824 MB"),
            ("today", "Saturday, 21 November 2026"),
            ("today + 90 days", "Friday, 19 February 2027"),
            ("tomorrow", "Sunday, 22 November 2026"),
            ("yesterday - 1 year", "Thursday, 20 November 2025"),
            ("90 days from today", "Friday, 19 February 2027"),
            ("TODAY + 1 week", "Saturday, 28 November 2026"),
            ("today + 2 months", "Thursday, 21 January 2027"),
            ("@2027-01-31 + 1 month", "Sunday, 28 February 2027"),
            ("@2028-01-31 + 1 month", "Tuesday, 29 February 2028"),
            ("today + 1 year - 1 day", "Saturday, 20 November 2027"),
            ("@2026-12-25 - today", "34 days"),
            ("today - tomorrow", "-1 day"),
            ("today", "Saturday, 21 November 2026"),
        ];
        for (expr, want) in cases {
            assert_eq!(calc(expr), want, "{expr}");
        }
    }

    #[test]
    fn errors_are_clear() {
        let cases = [
            ("", "error: the expression is empty"),
            ("   ", "error: the expression is empty"),
            ("1/0", "error: cannot calculate '1/0': division by zero"),
            (
                "5 +",
                "error: cannot calculate '5 +': unexpected input found",
            ),
            (
                "hello",
                "error: cannot calculate 'hello': unknown identifier 'hello'",
            ),
            (
                "2^2^2^30",
                "error: the calculation took too long and was stopped",
            ),
        ];
        for (expr, want) in cases {
            assert_eq!(calc(expr), want, "{expr:?}");
        }
        assert_eq!(
            evaluate(&"1+".repeat(600), NOON),
            Err(CalcError::TooLong(1200))
        );
    }

    #[test]
    fn words_inside_quotes_and_other_words_are_left_alone() {
        assert_eq!(resolve_relative_dates("nowhere", NOON), "nowhere");
        assert_eq!(resolve_relative_dates("\"today\"", NOON), "\"today\"");
        assert_eq!(resolve_relative_dates("today", NOON), "@2026-11-21");
    }

    #[test]
    fn local_date_uses_the_offset() {
        // 23:30 UTC on the 21st is already the 22nd in Tokyo.
        let late = Clock {
            unix_ms: NOON.unix_ms + 11.5 * 3_600_000.0,
            utc_offset_minutes: 9 * 60,
        };
        assert_eq!(late.local_date(), (2026, 11, 22));
        let west = Clock {
            unix_ms: NOON.unix_ms - 11.5 * 3_600_000.0,
            utc_offset_minutes: -5 * 60,
        };
        assert_eq!(west.local_date(), (2026, 11, 20));
    }
}
