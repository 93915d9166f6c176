//! Tokens and money: a real tokenizer for the text of a transcript, and prices per model.

use std::fmt;

/// Counts the tokens of `text` with the `o200k_base` encoding (tiktoken-rs's bundled
/// vocabulary). Other models' tokenizers differ by a few per cent; the count is an estimate
/// of what the model read or wrote, not its bill.
pub fn count(text: &str) -> u64 {
    if text.is_empty() {
        return 0;
    }
    tiktoken_rs::o200k_base_singleton().count_ordinary(text) as u64
}

/// A price in US dollars per million input and output tokens.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Price {
    /// Dollars per million input tokens.
    pub input: f64,
    /// Dollars per million output tokens.
    pub output: f64,
}

impl Price {
    /// The cost of `input` and `output` tokens.
    pub fn cost(&self, input: u64, output: u64) -> f64 {
        (input as f64 * self.input + output as f64 * self.output) / 1_000_000.0
    }
}

/// A `--price` that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("--price `{0}`: expected INPUT/OUTPUT in dollars per million tokens, e.g. `3/15`")]
pub struct BadPrice(pub String);

impl std::str::FromStr for Price {
    type Err = BadPrice;

    /// `INPUT/OUTPUT` (or one number for both), dollars per million tokens.
    fn from_str(s: &str) -> Result<Price, BadPrice> {
        let bad = || BadPrice(s.to_owned());
        let num = |x: &str| -> Result<f64, BadPrice> {
            let v: f64 = x.trim().parse().map_err(|_| bad())?;
            if v.is_finite() && v >= 0.0 {
                Ok(v)
            } else {
                Err(bad())
            }
        };
        match s.split_once('/') {
            Some((i, o)) => Ok(Price {
                input: num(i)?,
                output: num(o)?,
            }),
            None => {
                let v = num(s)?;
                Ok(Price {
                    input: v,
                    output: v,
                })
            }
        }
    }
}

impl fmt::Display for Price {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "${}/${} per Mtok", self.input, self.output)
    }
}

/// List prices of a few model families, in dollars per million input / output tokens,
/// matched by the longest prefix of the model name a transcript records. Cached input is
/// billed lower by every vendor: these figures are upper bounds for re-sent context.
pub const PRICES: &[(&str, Price)] = &[
    (
        "claude-opus-4-5",
        Price {
            input: 5.0,
            output: 25.0,
        },
    ),
    (
        "claude-opus-4-6",
        Price {
            input: 5.0,
            output: 25.0,
        },
    ),
    (
        "claude-opus-4",
        Price {
            input: 15.0,
            output: 75.0,
        },
    ),
    (
        "claude-sonnet-4",
        Price {
            input: 3.0,
            output: 15.0,
        },
    ),
    (
        "claude-3-7-sonnet",
        Price {
            input: 3.0,
            output: 15.0,
        },
    ),
    (
        "claude-haiku-4",
        Price {
            input: 1.0,
            output: 5.0,
        },
    ),
    (
        "claude-3-5-haiku",
        Price {
            input: 0.8,
            output: 4.0,
        },
    ),
    (
        "gpt-5-mini",
        Price {
            input: 0.25,
            output: 2.0,
        },
    ),
    (
        "gpt-5-nano",
        Price {
            input: 0.05,
            output: 0.4,
        },
    ),
    (
        "gpt-5",
        Price {
            input: 1.25,
            output: 10.0,
        },
    ),
    (
        "gpt-4.1-mini",
        Price {
            input: 0.4,
            output: 1.6,
        },
    ),
    (
        "gpt-4.1",
        Price {
            input: 2.0,
            output: 8.0,
        },
    ),
    (
        "o4-mini",
        Price {
            input: 1.1,
            output: 4.4,
        },
    ),
    (
        "o3",
        Price {
            input: 2.0,
            output: 8.0,
        },
    ),
];

/// The table's price for `model` (longest matching prefix), if any.
///
/// ```
/// use loopguard_scan::tokens::price_of;
/// assert_eq!(price_of("claude-sonnet-4-5-20250929").map(|p| p.input), Some(3.0));
/// assert_eq!(price_of("gpt-5-mini-2025").map(|p| p.output), Some(2.0));
/// assert!(price_of("my-local-model").is_none());
/// ```
pub fn price_of(model: &str) -> Option<Price> {
    PRICES
        .iter()
        .filter(|(prefix, _)| model.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, p)| *p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_parse_and_cost() {
        let p: Price = "3/15".parse().unwrap();
        assert_eq!(
            p,
            Price {
                input: 3.0,
                output: 15.0
            }
        );
        assert!((p.cost(1_000_000, 100_000) - 4.5).abs() < 1e-9);
        assert_eq!("2".parse::<Price>().unwrap().output, 2.0);
        assert!("x/1".parse::<Price>().is_err());
        assert!("-1/1".parse::<Price>().is_err());
    }

    #[test]
    fn the_tokenizer_counts_real_tokens() {
        assert_eq!(count(""), 0);
        assert_eq!(count("hello"), 1);
        let words = "the quick brown fox jumps over the lazy dog ".repeat(10);
        let n = count(&words);
        // One token per word, give or take the spaces' merging.
        assert!((85..=100).contains(&n), "{n}");
    }
}
