//! [`Transformed`]: a rewrite's result together with whether it changed
//! anything, so the optimizer's driver knows when the rules have reached a
//! fixed point without comparing plans.

/// A value a rewrite produced, and whether the rewrite changed it.
#[derive(Debug, Clone)]
pub struct Transformed<T> {
    /// The (maybe) rewritten value.
    pub data: T,
    /// True when `data` differs from what the rewrite was given.
    pub transformed: bool,
}

impl<T> Transformed<T> {
    /// A value the rewrite changed.
    pub fn yes(data: T) -> Self {
        Transformed {
            data,
            transformed: true,
        }
    }

    /// A value the rewrite left as it was.
    pub fn no(data: T) -> Self {
        Transformed {
            data,
            transformed: false,
        }
    }

    /// `new`, marked changed when it differs from `old`: for rewrites that
    /// rebuild what they are given and cannot tell cheaply whether they
    /// changed it.
    pub fn compared(old: &T, new: T) -> Self
    where
        T: PartialEq,
    {
        let transformed = *old != new;
        Transformed {
            data: new,
            transformed,
        }
    }
}
