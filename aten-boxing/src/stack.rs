//! The `Stack`: the boxed calling convention's argument and return vector.
//!
//! A boxed call pushes the arguments in schema order; the kernel pops all of
//! them and pushes exactly its returns, in order.

use c10_core::{Error, Result};

use crate::ivalue::IValue;

/// The boxed calling convention's value stack (`torch::jit::Stack`).
pub type Stack = Vec<IValue>;

/// PyTorch's stack helpers (`push`, `pop`, `peek`, `drop`, `last`) on [`Stack`].
pub trait StackExt {
    /// Pushes one value.
    #[doc(alias = "push")]
    fn push_value(&mut self, v: impl Into<IValue>);
    /// Pops the top value, or an error on an empty stack.
    #[doc(alias = "pop")]
    fn pop_value(&mut self) -> Result<IValue>;
    /// The value `i` places below the top of the last `n` (PyTorch's
    /// `peek(stack, i, n)`: `i` counts from the first of those `n`).
    fn peek(&self, i: usize, n: usize) -> Result<&IValue>;
    /// The last `n` values.
    #[doc(alias = "last")]
    fn last_n(&self, n: usize) -> Result<&[IValue]>;
    /// Removes the last `n` values.
    #[doc(alias = "drop")]
    fn drop_n(&mut self, n: usize) -> Result<()>;
    /// Removes and returns the last `n` values, in stack order.
    #[doc(alias = "pop")]
    fn pop_n(&mut self, n: usize) -> Result<Vec<IValue>>;
}

fn underflow(n: usize, len: usize) -> Error {
    Error::internal(format!(
        "stack underflow: needed {n} values but the stack holds {len}"
    ))
}

impl StackExt for Stack {
    fn push_value(&mut self, v: impl Into<IValue>) {
        self.push(v.into());
    }

    fn pop_value(&mut self) -> Result<IValue> {
        self.pop().ok_or_else(|| underflow(1, 0))
    }

    fn peek(&self, i: usize, n: usize) -> Result<&IValue> {
        let window = self.last_n(n)?;
        window.get(i).ok_or_else(|| underflow(i + 1, n))
    }

    fn last_n(&self, n: usize) -> Result<&[IValue]> {
        let len = self.len();
        if n > len {
            return Err(underflow(n, len));
        }
        Ok(&self[len - n..])
    }

    fn drop_n(&mut self, n: usize) -> Result<()> {
        let len = self.len();
        if n > len {
            return Err(underflow(n, len));
        }
        self.truncate(len - n);
        Ok(())
    }

    fn pop_n(&mut self, n: usize) -> Result<Vec<IValue>> {
        let len = self.len();
        if n > len {
            return Err(underflow(n, len));
        }
        Ok(self.split_off(len - n))
    }
}
