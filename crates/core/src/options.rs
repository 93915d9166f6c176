//! Checks for the option shapes every detector repeats — positive counts, bounded counts,
//! windows, fractions, a warning tier below a critical one — with one wording per error and
//! the key path of the offending key.
//!
//! ```
//! use loopguard_core::options::Scope;
//! let s = Scope::new("detectors.my-detector");
//! assert_eq!(s.positive("history-size", None, 30).unwrap(), 30);
//! let err = s.positive("history-size", Some(0), 30).unwrap_err();
//! assert_eq!(err.to_string(), "`detectors.my-detector.history-size`: must be a positive integer (found 0)");
//! let err = s.below(("warning-threshold", 9), ("critical-threshold", 9)).unwrap_err();
//! assert_eq!(err.path(), Some("detectors.my-detector.critical-threshold"));
//! assert_eq!(err.to_string(), "`detectors.my-detector.critical-threshold`: warning-threshold must be lower than critical-threshold (found 9 and 9)");
//! ```

use crate::error::ConfigError;
use std::fmt::Display;

/// The path of one options table (e.g. `detectors.ping-pong`, or `detectors.x.near-duplicate`
/// for a nested one), which every error of its checks names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scope<'a> {
    path: &'a str,
}

impl<'a> Scope<'a> {
    /// The scope of the table at `path`.
    pub const fn new(path: &'a str) -> Scope<'a> {
        Scope { path }
    }

    /// The table's own path.
    pub fn path(&self) -> &'a str {
        self.path
    }

    /// The dotted path of `key` in this table.
    pub fn key(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    /// An error at `key` with `message`.
    pub fn invalid(&self, key: &str, message: impl Into<String>) -> ConfigError {
        ConfigError::invalid(self.key(key), message)
    }

    /// `n` when `ok`, otherwise the one wording of a value out of range: "must be `expected`
    /// (found `n`)".
    fn require<T: Display>(
        &self,
        key: &str,
        n: T,
        ok: bool,
        expected: impl Display,
    ) -> Result<T, ConfigError> {
        if ok {
            Ok(n)
        } else {
            Err(self.invalid(key, format!("must be {expected} (found {n})")))
        }
    }

    /// A count that must be at least 1; `None` is `default`.
    pub fn positive<T: PartialOrd + Display + Copy + Default>(
        &self,
        key: &str,
        value: Option<T>,
        default: T,
    ) -> Result<T, ConfigError> {
        let n = value.unwrap_or(default);
        self.require(key, n, n > T::default(), "a positive integer")
    }

    /// A count between 1 and `max` (a window, a history size); `None` is `default`.
    pub fn positive_at_most<T: PartialOrd + Display + Copy + Default>(
        &self,
        key: &str,
        value: Option<T>,
        default: T,
        max: T,
    ) -> Result<T, ConfigError> {
        let n = value.unwrap_or(default);
        let ok = n > T::default() && n <= max;
        self.require(
            key,
            n,
            ok,
            format_args!("a positive integer of at most {max}"),
        )
    }

    /// [`Scope::positive_at_most`] for a key read as a signed integer (negative values are
    /// rejected with the same wording).
    pub fn positive_at_most_i64(
        &self,
        key: &str,
        value: Option<i64>,
        default: u32,
        max: u32,
    ) -> Result<u32, ConfigError> {
        let n = value.unwrap_or(i64::from(default));
        let small = u32::try_from(n).ok().filter(|n| (1..=max).contains(n));
        self.require(
            key,
            n,
            small.is_some(),
            format_args!("a positive integer of at most {max}"),
        )?;
        Ok(small.unwrap_or(default))
    }

    /// A count read as a signed integer where 0 means "off" or "never": 0, or from `min` to
    /// `max`; `None` is `default`.
    ///
    /// ```
    /// use loopguard_core::Scope;
    /// let s = Scope::new("detectors.x");
    /// assert_eq!(s.zero_or_count_i64("k", Some(0), 5, 2, 9).unwrap(), 0);
    /// assert_eq!(s.zero_or_count_i64("k", None, 5, 2, 9).unwrap(), 5);
    /// assert!(s.zero_or_count_i64("k", Some(1), 5, 2, 9).is_err());
    /// assert!(s.zero_or_count_i64("k", Some(-1), 5, 2, 9).is_err());
    /// ```
    pub fn zero_or_count_i64(
        &self,
        key: &str,
        value: Option<i64>,
        default: u32,
        min: i64,
        max: i64,
    ) -> Result<u32, ConfigError> {
        let n = self.between(key, value, i64::from(default), 0, max)?;
        if n != 0 {
            self.between(key, Some(n), 0, min, max)?;
        }
        Ok(u32::try_from(n).unwrap_or(default))
    }

    /// A value of at least `min` (a count that needs a few occurrences to mean anything);
    /// `None` is `default`.
    pub fn at_least<T: PartialOrd + Display + Copy>(
        &self,
        key: &str,
        value: Option<T>,
        default: T,
        min: T,
    ) -> Result<T, ConfigError> {
        let n = value.unwrap_or(default);
        // NaN is not at least anything.
        let ok = n
            .partial_cmp(&min)
            .is_some_and(|o| o != std::cmp::Ordering::Less);
        self.require(key, n, ok, format_args!("at least {min}"))
    }

    /// A value greater than 0 and at most 1 (a similarity); `None` is `default`.
    pub fn similarity(
        &self,
        key: &str,
        value: Option<f64>,
        default: f64,
    ) -> Result<f64, ConfigError> {
        let n = value.unwrap_or(default);
        self.require(key, n, n > 0.0 && n <= 1.0, "greater than 0 and at most 1")
    }

    /// A value between `min` and `max`, both included; `None` is `default`.
    pub fn between<T: PartialOrd + Display + Copy>(
        &self,
        key: &str,
        value: Option<T>,
        default: T,
        min: T,
        max: T,
    ) -> Result<T, ConfigError> {
        let n = value.unwrap_or(default);
        // Written so that NaN is out of range too.
        let ok = n >= min && n <= max;
        self.require(key, n, ok, format_args!("between {min} and {max}"))
    }

    /// A fraction between 0 and 1, both included; `None` is `default`.
    pub fn fraction(
        &self,
        key: &str,
        value: Option<f64>,
        default: f64,
    ) -> Result<f64, ConfigError> {
        self.between(key, value, default, 0.0, 1.0)
    }

    /// A value that must not exceed another key's (e.g. a count within a window); the error
    /// names `small`'s key.
    pub fn within<T: PartialOrd + Display + Copy>(
        &self,
        (small_key, small): (&str, T),
        (large_key, large): (&str, T),
    ) -> Result<(), ConfigError> {
        if small > large {
            return Err(self.invalid(
                small_key,
                format!("must be at most {large_key} (found {small} and {large})"),
            ));
        }
        Ok(())
    }

    /// The `warning-threshold` and `critical-threshold` of a two-tier detector, each
    /// `(value, default)`: both positive counts and, when `ordered` (the warning tier is on),
    /// the warning strictly below the critical one ([`Scope::below`]).
    pub fn tiers<T: PartialOrd + Display + Copy + Default>(
        &self,
        warning: (Option<T>, T),
        critical: (Option<T>, T),
        ordered: bool,
    ) -> Result<(T, T), ConfigError> {
        let w = self.positive("warning-threshold", warning.0, warning.1)?;
        let c = self.positive("critical-threshold", critical.0, critical.1)?;
        if ordered {
            self.below(("warning-threshold", w), ("critical-threshold", c))?;
        }
        Ok((w, c))
    }

    /// A lower tier strictly below a higher one (a warning threshold below the critical one);
    /// the error names the higher key.
    pub fn below<T: PartialOrd + Display + Copy>(
        &self,
        (low_key, low): (&str, T),
        (high_key, high): (&str, T),
    ) -> Result<(), ConfigError> {
        if low >= high {
            return Err(self.invalid(
                high_key,
                format!("{low_key} must be lower than {high_key} (found {low} and {high})"),
            ));
        }
        Ok(())
    }
}

/// The text of a documentation attribute list joined by [`detector_options!`]: the leading
/// space each `///` line carries is dropped.
#[doc(hidden)]
pub const fn doc_text(joined: &'static str) -> &'static str {
    joined.trim_ascii()
}

/// The parts of one option that [`detector_options!`] may leave out: the shown default (the
/// default as written), the settings type (the options type) and the public constant.
#[doc(hidden)]
#[macro_export]
macro_rules! __option_part {
    (shown $shown:literal; $default:expr) => {
        $shown
    };
    (shown; $default:expr) => {
        stringify!($default)
    };
    (type $settings:ty; $options:ty) => {
        $settings
    };
    (type; $options:ty) => {
        $options
    };
    (const; $($rest:tt)*) => {};
    (const $const:ident; $key:literal; $default:expr; $($settings:ty)?; $options:ty) => {
        #[doc = concat!("The default `", $key, "`.")]
        pub const $const: $crate::__option_part!(type $($settings)?; $options) = $default;
    };
}

/// Declares a detector's options once: the `Options` table as written (serde, the given TOML
/// keys, unknown keys denied, every key optional; `Clone, Debug, Default, PartialEq` and serde's
/// derives), the resolved `Settings` (`Clone, Debug, PartialEq`; more derives may be added), its
/// `Default`, and `Options::DOCS`, the [`OptionDoc`](crate::OptionDoc)s of the registration.
///
/// One declaration per option: its doc comment (the documented sentence, also the rustdoc of
/// both fields), then `"key" field: OptionsType => SettingsType = default, "type", "shown
/// default";` (`=> SettingsType` may be left out when both types are the same; the shown
/// default, when it is the default as written, e.g. `30` or `true`). With `default, const
/// NAME, …` the default is also the public constant `Settings::NAME`.
/// Validation stays in the detector's own `Settings::from_options`.
///
/// ```
/// loopguard_core::detector_options! {
///     /// The table as written.
///     pub struct Options;
///     /// Resolved settings.
///     #[derive(Eq)]
///     pub struct Settings;
///
///     /// How many repeats warn.
///     "warning-threshold" warning_threshold: i64 => u32 = 3, const DEFAULT_WARNING, "positive integer";
///     /// Tools never counted.
///     "ignore-tools" ignore_tools: Vec<String> = Vec::new(), "list of strings", "[]";
/// }
/// assert_eq!(Settings::default(), Settings { warning_threshold: 3, ignore_tools: vec![] });
/// assert_eq!(Settings::DEFAULT_WARNING, 3);
/// assert_eq!(Options::DOCS[0].name, "warning-threshold");
/// assert_eq!(Options::DOCS[0].doc, "How many repeats warn.");
/// assert_eq!((Options::DOCS[0].default, Options::DOCS[1].default), ("3", "[]"));
/// let o: Options = toml::from_str("warning-threshold = 4").unwrap();
/// assert_eq!(o.warning_threshold, Some(4));
/// assert!(toml::from_str::<Options>("warning_threshold = 4").is_err());
/// ```
#[macro_export]
macro_rules! detector_options {
    (
        $(#[$options_attr:meta])*
        pub struct $options:ident;
        $(#[$settings_attr:meta])*
        pub struct $settings:ident;
        $(
            $(#[doc = $doc:literal])+
            $key:literal $field:ident : $oty:ty $(=> $sty:ty)? = $default:expr
                $(, const $const:ident)?, $ty:literal $(, $shown:literal)?;
        )*
    ) => {
        $(#[$options_attr])*
        #[derive(
            Clone,
            Debug,
            Default,
            PartialEq,
            $crate::__private::serde::Serialize,
            $crate::__private::serde::Deserialize,
        )]
        #[serde(deny_unknown_fields)]
        pub struct $options {
            $(
                $(#[doc = $doc])+
                #[serde(rename = $key)]
                pub $field: ::std::option::Option<$oty>,
            )*
        }

        impl $options {
            /// The documented options, in declaration order.
            pub const DOCS: &'static [$crate::OptionDoc] = &[
                $(
                    $crate::OptionDoc {
                        name: $key,
                        ty: $ty,
                        default: $crate::__option_part!(shown $($shown)?; $default),
                        doc: $crate::options::doc_text(concat!($($doc),+)),
                    },
                )*
            ];
        }

        $(#[$settings_attr])*
        #[derive(Clone, Debug, PartialEq)]
        pub struct $settings {
            $(
                $(#[doc = $doc])+
                pub $field: $crate::__option_part!(type $($sty)?; $oty),
            )*
        }

        impl $settings {
            $($crate::__option_part!(const $($const)?; $key; $default; $($sty)?; $oty);)*
        }

        impl ::std::default::Default for $settings {
            fn default() -> Self {
                $settings {
                    $($field: $default,)*
                }
            }
        }
    };
}

/// Declares a detector crate's registration: `NAME`, `CODE`, the private `SCOPE`
/// (`detectors.<name>`), the `build` function (the crate's `Options` resolved by
/// `Settings::from_options`, then `detector`), and `REGISTRATION` (the crate's README as its
/// docs, `Options::DOCS` as its options), submitted with
/// [`register_detector!`](crate::register_detector). Further fields of the
/// [`Registration`](crate::Registration) (`openclaw`, `env`, `presets`, `renamed`,
/// `default_enabled`) follow the summary; the rest are those of
/// [`Registration::bare`](crate::Registration::bare).
///
/// ```ignore
/// loopguard_core::detector_registration! {
///     name: "my-detector", code: "XY001", detector: MyDetector::new,
///     summary: "what it catches, in one line",
///     openclaw: loopguard_core::OpenClawImport::NONE,
/// }
/// ```
#[macro_export]
macro_rules! detector_registration {
    (
        name: $name:literal, code: $code:literal, detector: $new:expr,
        summary: $summary:literal
        $(, $field:ident: $value:expr)* $(,)?
    ) => {
        /// The detector's registered name.
        pub const NAME: &str = $name;
        /// The detector's stable code.
        pub const CODE: &str = $code;
        const SCOPE: &str = concat!("detectors.", $name);

        fn build(
            table: &$crate::toml::Table,
        ) -> ::std::result::Result<::std::boxed::Box<dyn $crate::Detector>, $crate::ConfigError> {
            $crate::build_detector(SCOPE, table, Settings::from_options, $new)
        }

        /// The registration submitted to loopguard's registry.
        pub const REGISTRATION: $crate::Registration = $crate::Registration {
            docs: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")),
            package: env!("CARGO_PKG_NAME"),
            options: Options::DOCS,
            $($field: $value,)*
            ..$crate::Registration::bare($name, $code, $summary, build)
        };

        $crate::register_detector!(REGISTRATION);
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_check_names_the_key_and_keeps_valid_values() {
        let s = Scope::new("detectors.d");
        assert_eq!(s.positive("k", Some(4), 1).ok(), Some(4));
        assert_eq!(
            s.positive("k", Some(0), 1)
                .err()
                .and_then(|e| e.path().map(str::to_owned)),
            Some("detectors.d.k".to_owned())
        );
        assert_eq!(s.positive_at_most("w", Some(10), 3, 10).ok(), Some(10));
        let err = s
            .positive_at_most("w", Some(11), 3, 10)
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("`detectors.d.w`: must be a positive integer of at most 10 (found 11)")
        );
        assert!(s.positive_at_most("w", Some(0), 3, 10).is_err());
        assert_eq!(s.positive_at_most_i64("w", Some(10), 3, 10).ok(), Some(10));
        assert_eq!(s.positive_at_most_i64("w", None, 3, 10).ok(), Some(3));
        let err = s
            .positive_at_most_i64("w", Some(-2), 3, 10)
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("`detectors.d.w`: must be a positive integer of at most 10 (found -2)")
        );
        assert_eq!(s.fraction("f", None, 0.5).ok(), Some(0.5));
        assert!(s.fraction("f", Some(1.5), 0.5).is_err());
        assert!(s.fraction("f", Some(f64::NAN), 0.5).is_err());
        assert!(s.similarity("f", Some(0.0), 0.5).is_err());
        assert_eq!(s.similarity("f", Some(1.0), 0.5).ok(), Some(1.0));
        assert_eq!(s.at_least("a", Some(3u32), 4, 3).ok(), Some(3));
        let err = s
            .at_least("a", Some(2u32), 4, 3)
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some("`detectors.d.a`: must be at least 3 (found 2)")
        );
        assert_eq!(s.between("b", Some(2u32), 3, 2, 6).ok(), Some(2));
        assert!(s.between("b", Some(7u32), 3, 2, 6).is_err());
        assert!(s.within(("c", 4u32), ("w", 4)).is_ok());
        let err = s.within(("c", 5u32), ("w", 4)).err();
        assert_eq!(err.as_ref().and_then(|e| e.path()), Some("detectors.d.c"));
        assert!(s.below(("lo", 3u32), ("hi", 4)).is_ok());
        assert!(s.below(("lo", 4u32), ("hi", 4)).is_err());
        assert_eq!(Scope::new("").key("x"), "x");
        assert_eq!(
            s.tiers((None, 3u32), (Some(5), 10), true).ok(),
            Some((3, 5))
        );
        let err = s.tiers((Some(5u32), 3), (None, 5), true).err();
        assert_eq!(
            err.as_ref().and_then(|e| e.path()),
            Some("detectors.d.critical-threshold")
        );
        assert!(s.tiers((Some(5u32), 3), (None, 5), false).is_ok());
        let err = s.tiers((Some(0u32), 3), (None, 5), false).err();
        assert_eq!(
            err.as_ref().and_then(|e| e.path()),
            Some("detectors.d.warning-threshold")
        );
    }
}
