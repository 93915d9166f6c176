//! loopguard's built-in result normalisers (exec-like results, process polls, message sends,
//! and a generic pass over JSON results and shell noise).

use crate::normalize::Normalizers;

/// The built-in set.
pub(crate) fn builtin() -> Normalizers {
    Normalizers::exact()
}
