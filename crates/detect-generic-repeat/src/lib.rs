//! loopguard detector `generic-repeat` (LG001): same tool, same arguments, same result, again and again.
//!
//! Not implemented yet.
