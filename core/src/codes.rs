//! The stable number and name of every enumerated value that crosses into
//! another language: error kinds ([`ErrorKind`](crate::ErrorKind)), session
//! states, lock states, lost reasons, lock kinds, naming schemes and
//! participant kinds. These tables are the one source:
//! the C header and the C# enums are generated from them
//! (`scripts/codegen.sh`), and each binding matches the enums with no
//! wildcard, so a new variant fails to compile until every table and
//! binding handles it. Codes are only ever appended: a caller built against
//! an older list keeps working.
//!
//! This module is the [`codes!`] macro that gives an enum its table; each
//! table stands beside its enum: `ErrorKind` in `error.rs`, the session and
//! lock states and lost reasons in `state.rs`, `Scheme` in `naming.rs`,
//! `Kind` in `recipe/lock/mod.rs`, `ParticipantKind` in `inspect.rs`. So the
//! leaves that use it (`error.rs`, `state.rs`) import nothing above them.

/// Gives a fieldless enum its codes: `ALL` (every value, in code order),
/// `code()` and `from_code()`, `name()` (snake_case, stable: metrics labels
/// and the bindings' names derive from it) and `doc()` (one line, for the
/// generated C and C#).
/// `pub enum` defines the enum too, its variants documented by those lines;
/// `impl` describes an enum defined elsewhere.
macro_rules! codes {
    (
        $(#[$meta:meta])*
        pub enum $ty:ident {
            $( $(#[doc = $doc:literal])+ $variant:ident = $code:literal => $name:literal, )+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $ty {
            $( $(#[doc = $doc])+ $variant, )+
        }
        $crate::codes::codes! { impl $ty { $( $(#[doc = $doc])+ $variant = $code => $name, )+ } }
    };
    (impl $ty:ident { $( $(#[doc = $doc:literal])+ $variant:ident = $code:literal => $name:literal, )+ }) => {
        impl $ty {
            /// Every value, in code order.
            pub const ALL: [$ty; [$($code),+].len()] = [$($ty::$variant),+];

            /// The stable number the C ABI and C# carry.
            pub const fn code(self) -> i32 {
                match self {
                    $( $ty::$variant => $code, )+
                }
            }

            /// The value of a code; `None` if no value has it.
            pub const fn from_code(code: i32) -> Option<$ty> {
                match code {
                    $( $code => Some($ty::$variant), )+
                    _ => None,
                }
            }

            /// The stable snake_case name (a metrics label; the bindings' names derive from it).
            pub const fn name(self) -> &'static str {
                match self {
                    $( $ty::$variant => $name, )+
                }
            }

            /// What it means, in a line: the generated C header and C# enums say it.
            pub const fn doc(self) -> &'static str {
                match self {
                    $( $ty::$variant => concat!($($doc),+), )+
                }
            }
        }
    };
}
pub(crate) use codes;

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use crate::{ErrorKind, Kind, LockState, LostReason, ParticipantKind, Scheme, SessionState};

    /// Codes ascend (so `ALL` is in code order and none repeats); names are
    /// distinct snake_case; every doc says something.
    fn check<T: Copy + std::fmt::Debug>(
        all: &[T],
        code: fn(T) -> i32,
        name: fn(T) -> &'static str,
        doc: fn(T) -> &'static str,
    ) {
        let codes: Vec<i32> = all.iter().map(|v| code(*v)).collect();
        assert!(codes.windows(2).all(|w| w[0] < w[1]), "{all:?}: codes {codes:?} do not ascend");
        let names: HashSet<&str> = all.iter().map(|v| name(*v)).collect();
        for v in all {
            let name = name(*v);
            assert!(name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'), "{v:?}: {name:?} is not snake_case");
            assert!(!doc(*v).trim().is_empty(), "{v:?} has no doc");
        }
        assert_eq!(names.len(), all.len(), "{all:?}: a name repeats");
    }

    #[test]
    fn each_table_has_distinct_ascending_codes_and_distinct_names() {
        check(&ErrorKind::ALL, ErrorKind::code, ErrorKind::name, ErrorKind::doc);
        check(&SessionState::ALL, SessionState::code, SessionState::name, SessionState::doc);
        check(&LostReason::ALL, LostReason::code, LostReason::name, LostReason::doc);
        check(&Kind::ALL, Kind::code, Kind::name, Kind::doc);
        check(&Scheme::ALL, Scheme::code, Scheme::name, Scheme::doc);
        check(&ParticipantKind::ALL, ParticipantKind::code, ParticipantKind::name, ParticipantKind::doc);
        let lock_codes: Vec<i32> = LockState::ALL.iter().map(|s| s.code()).collect();
        assert!(lock_codes.windows(2).all(|w| w[0] < w[1]), "{lock_codes:?}");
    }

    #[test]
    fn from_code_inverts_code() {
        for kind in ErrorKind::ALL {
            assert_eq!(ErrorKind::from_code(kind.code()), Some(kind));
        }
        assert_eq!(Scheme::from_code(2), None);
        assert_eq!(Kind::from_code(-1), None);
    }

    #[test]
    fn a_lost_reason_is_never_zero_which_says_not_lost() {
        assert!(LostReason::ALL.iter().all(|r| r.code() > 0));
    }
}
