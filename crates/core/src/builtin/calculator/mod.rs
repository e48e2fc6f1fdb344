//! The calculator skill: math, units, dates and percentages. Dates are
//! read by `date_math` (differences as durations in the unit asked, dates
//! moved by amounts, a date used as a number refused with a reason);
//! percentages added to or taken from an amount are read the way people
//! mean them (`847 + 15%` is 974.05); everything else goes to fend-core's
//! parser. Nothing is ever evaluated as code.

pub mod date_math;

use std::sync::atomic::{AtomicU32, Ordering};

use serde::{Deserialize, Serialize};

use crate::util::dates::civil_from_days;

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
    let asked = without_question(trimmed);
    let today = crate::util::dates::Date::from_tuple(clock.local_date());
    if let Some(answer) = crate::builtin::calculator::date_math::evaluate(asked, today) {
        return answer
            .map(|result| Calculation {
                expression: trimmed.to_string(),
                result,
            })
            .map_err(|reason| CalcError::Invalid {
                expression: trimmed.to_string(),
                reason,
            });
    }
    let prepared = percent_forms(asked).unwrap_or_else(|| asked.to_string());
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

/// The calculation inside a question: "what is 15% of 847?" is "15% of
/// 847", "convert 5 miles to km" is "5 miles to km".
fn without_question(expression: &str) -> &str {
    const LEADS: [&str; 9] = [
        "what is ",
        "what's ",
        "whats ",
        "how much is ",
        "calculate ",
        "compute ",
        "convert ",
        "work out ",
        "evaluate ",
    ];
    let mut rest = expression.trim();
    for lead in LEADS {
        if rest.len() > lead.len()
            && rest.is_char_boundary(lead.len())
            && rest[..lead.len()].eq_ignore_ascii_case(lead)
        {
            rest = rest[lead.len()..].trim_start();
            break;
        }
    }
    let rest = rest.trim_end_matches(['?', '!']).trim_end();
    if rest.is_empty() { expression } else { rest }
}

/// Percentages as people use them, rewritten for fend (which reads `%`
/// as a hundredth wherever it stands): `847 + 15%` and `847 - 15%` change
/// 847 by 15% of it; `15% off 847` takes 15% of it away; `15 as a
/// percentage of 60` and `15 is what percent of 60` give 25%. `None` for
/// every other expression.
fn percent_forms(expression: &str) -> Option<String> {
    let e = expression
        .trim()
        .trim_end_matches(['?', '.'])
        .trim_end()
        .to_lowercase();
    for word in [
        " as a percentage of ",
        " as a percent of ",
        " as percent of ",
        " as % of ",
        " is what percent of ",
        " is what percentage of ",
        " is what % of ",
        " in percent of ",
    ] {
        if let Some((part, whole)) = e.split_once(word) {
            return Some(format!("({part}) / ({whole}) to %"));
        }
    }
    if let Some((p, amount)) = e.split_once("% off ") {
        return Some(format!("({amount}) * (1 - ({p}) / 100)"));
    }
    // `A + P%` / `A - P%`: P a plain number at the very end.
    let body = e.strip_suffix('%')?.trim_end();
    let digits = body
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_ascii_digit() || *c == '.' || *c == ',')
        .last()
        .map(|(i, _)| i)?;
    let p = &body[digits..];
    let before = body[..digits].trim_end();
    let (amount, sign) = match before.char_indices().next_back()? {
        (i, '+') => (&before[..i], '+'),
        (i, '-') => (&before[..i], '-'),
        _ => return None,
    };
    let amount = amount.trim();
    let incomplete = amount.is_empty()
        || amount.contains('%')
        || amount.ends_with(['+', '-', '*', '/', '^', '('])
        || amount.ends_with(" of");
    if incomplete {
        return None;
    }
    Some(format!("({amount}) * (1 {sign} {p} / 100)"))
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
    fn percentages_read_as_people_mean_them() {
        let cases = [
            ("847 + 15%", "974.05"),
            ("847 - 15%", "719.95"),
            ("15% off 80", "68"),
            ("15 as a percentage of 60", "25%"),
            ("15 is what percent of 60", "25%"),
            ("15% of 847", "127.05"),
            ("(100 + 20) + 10%", "132"),
        ];
        for (expr, want) in cases {
            assert_eq!(calc(expr), want, "{expr}");
        }
    }

    #[test]
    fn dates_are_never_silent_numbers() {
        assert_eq!(calc("2026-12-25 - 2026-01-01"), "358 days");
        assert_eq!(calc("days between 2026-01-01 and 2026-12-25"), "358 days");
        assert!(calc("2026-12-25 * 2").contains("used as a number"));
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
