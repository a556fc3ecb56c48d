//! Products named by their dimensions (CompositeImplicitAutograd, PyTorch's
//! `Linear.cpp`): `einsum` (each operand's subscripts brought to one
//! order, diagonals taken for repeated subscripts, then the operands
//! contracted left to right by `sumproduct_pair`, a batched matrix product
//! of the dimensions each side has), `tensordot`, `inner`, `outer` and its
//! alias `ger`.

use c10_core::{Error, Result};

use super::dims::{fmt_list, wrap_dim};
use crate::generated::ops;
use crate::Tensor;

/// One subscript: a letter, or a dimension covered by the ellipsis.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Label {
    Letter(u8),
    Ellipsis(usize),
}

/// An operand's subscripts, as written (`...` kept as a marker).
fn parse_operand(term: &str, index: usize) -> Result<(Vec<u8>, bool)> {
    let mut letters = Vec::new();
    let mut ellipsis = false;
    let bytes = term.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'.' => {
                if ellipsis || bytes.get(i + 1) != Some(&b'.') || bytes.get(i + 2) != Some(&b'.') {
                    return Err(Error::runtime(format!(
                        "einsum(): found {} for operand {index} that is not part of any ellipsis",
                        "'.'"
                    )));
                }
                ellipsis = true;
                letters.push(b'.');
                i += 3;
                continue;
            }
            b' ' => {}
            c if c.is_ascii_alphabetic() => letters.push(c),
            c => {
                return Err(Error::runtime(format!(
                    "einsum(): invalid subscript given at index {i} in the equation string, subscripts must be in [a-zA-Z] (got '{}')",
                    c as char
                )))
            }
        }
        i += 1;
    }
    Ok((letters, ellipsis))
}

/// `einsum(equation, tensors, *, path)`.
pub fn einsum(equation: &str, tensors: &[Tensor], _path: Option<&[i64]>) -> Result<Tensor> {
    if tensors.is_empty() {
        return Err(Error::runtime(
            "einsum(): must provide at least one operand",
        ));
    }
    let (lhs, rhs) = match equation.split_once("->") {
        Some((l, r)) => (l, Some(r)),
        None => (equation, None),
    };
    let (operands, ell_dims) = operand_labels(lhs, tensors)?;
    let output = output_labels(rhs, &operands, ell_dims, tensors.len())?;
    // Every label in one order: the output's, then the contracted ones.
    let mut order = output.clone();
    for l in operands.iter().flatten() {
        if !order.contains(l) {
            order.push(*l);
        }
    }
    let mut seen: Vec<i64> = vec![1; order.len()];
    let aligned = operands
        .iter()
        .zip(tensors)
        .enumerate()
        .map(|(k, (labels, t))| align_operand(k, labels, t, &order, &mut seen))
        .collect::<Result<Vec<_>>>()?;
    contract(&aligned, output.len(), order.len())
}

/// The labels of each operand of `lhs` (the ellipsis expanded to the
/// dimensions it covers, numbered from the left of the widest), and the
/// number of ellipsis dimensions.
fn operand_labels(lhs: &str, tensors: &[Tensor]) -> Result<(Vec<Vec<Label>>, usize)> {
    let terms: Vec<&str> = lhs.split(',').collect();
    if terms.len() != tensors.len() {
        return Err(Error::runtime(format!(
            "einsum(): {} operands were provided but the equation specifies {} operands",
            tensors.len(),
            terms.len()
        )));
    }
    let mut ell_dims = 0usize;
    let mut operands: Vec<Vec<Label>> = Vec::with_capacity(tensors.len());
    for (k, (term, t)) in terms.iter().zip(tensors).enumerate() {
        let (letters, has_ellipsis) = parse_operand(term, k)?;
        let named = letters.iter().filter(|&&c| c != b'.').count();
        let dim = t.dim();
        if (has_ellipsis && named > dim) || (!has_ellipsis && named != dim) {
            return Err(Error::runtime(format!(
                "einsum(): the number of subscripts in the equation ({named}) {} the number of dimensions ({dim}) for operand {k}{}",
                if has_ellipsis { "is more than" } else { "does not match" },
                if has_ellipsis { "" } else { " and no ellipsis was given" }
            )));
        }
        let covered = dim - named;
        ell_dims = ell_dims.max(covered);
        let mut labels = Vec::with_capacity(dim);
        for c in letters {
            if c == b'.' {
                // Ellipsis dimensions are aligned to the right.
                for j in 0..covered {
                    labels.push(Label::Ellipsis(j + usize::MAX / 2 - covered));
                }
            } else {
                labels.push(Label::Letter(c));
            }
        }
        operands.push(labels);
    }
    // Ellipsis labels numbered from the left of the widest.
    for labels in &mut operands {
        for l in labels.iter_mut() {
            if let Label::Ellipsis(j) = l {
                *j = ell_dims - (usize::MAX / 2 - *j);
            }
        }
    }
    Ok((operands, ell_dims))
}

/// The output's labels: as `rhs` writes them, or (no `->`) the letters
/// seen once, sorted (upper case first), after the ellipsis.
fn output_labels(
    rhs: Option<&str>,
    operands: &[Vec<Label>],
    ell_dims: usize,
    n_operands: usize,
) -> Result<Vec<Label>> {
    let count = |c: u8| {
        operands
            .iter()
            .flatten()
            .filter(|l| **l == Label::Letter(c))
            .count()
    };
    let Some(r) = rhs else {
        let mut out: Vec<Label> = (0..ell_dims).map(Label::Ellipsis).collect();
        let mut seen: Vec<u8> = operands
            .iter()
            .flatten()
            .filter_map(|l| match l {
                Label::Letter(c) if count(*c) == 1 => Some(*c),
                _ => None,
            })
            .collect();
        seen.sort_unstable();
        seen.dedup();
        out.extend(seen.into_iter().map(Label::Letter));
        return Ok(out);
    };
    // Without `...` in the output, the ellipsis dimensions are contracted
    // like any label the output lacks.
    let (letters, _) = parse_operand(r, n_operands)?;
    let mut out = Vec::new();
    for c in letters {
        if c == b'.' {
            out.extend((0..ell_dims).map(Label::Ellipsis));
            continue;
        }
        if count(c) == 0 {
            return Err(Error::runtime(format!(
                "einsum(): output subscript {} does not appear in the equation for any input operand",
                c as char
            )));
        }
        if out.contains(&Label::Letter(c)) {
            return Err(Error::runtime(format!(
                "einsum(): output subscript {} appears more than once in the output",
                c as char
            )));
        }
        out.push(Label::Letter(c));
    }
    Ok(out)
}

/// Operand `k` (`t`, labelled `labels`) permuted to `order`, with size-one
/// dimensions for the labels it lacks and diagonals for repeated ones;
/// `seen` holds each label's size so far, for the broadcast check.
fn align_operand(
    k: usize,
    labels: &[Label],
    t: &Tensor,
    order: &[Label],
    seen: &mut [i64],
) -> Result<Tensor> {
    let (t, labels) = take_diagonals(t, labels)?;
    let mut perm = Vec::with_capacity(order.len());
    let mut shape = Vec::with_capacity(order.len());
    for l in order {
        match labels.iter().position(|x| x == l) {
            Some(p) => {
                perm.push(p as i64);
                shape.push(t.sizes()[p]);
            }
            None => shape.push(1),
        }
    }
    for (d, &size) in shape.iter().enumerate() {
        if size != 1 && seen[d] != 1 && size != seen[d] {
            return Err(Error::runtime(format!(
                "einsum(): subscript {} has size {size} for operand {k} which does not broadcast with previously seen size {}",
                label_name(order[d]),
                seen[d]
            )));
        }
        if size != 1 {
            seen[d] = size;
        }
    }
    let permuted = ops::permute(&t, &perm)?;
    ops::reshape(&permuted, &shape)
}

/// `t` with each repeated subscript replaced by its diagonal (moved last),
/// and the labels that remain.
fn take_diagonals(t: &Tensor, labels: &[Label]) -> Result<(Tensor, Vec<Label>)> {
    let mut t = t.clone();
    let mut labels = labels.to_vec();
    let mut i = 0;
    while i < labels.len() {
        let Some(j) = (i + 1..labels.len()).find(|&j| labels[j] == labels[i]) else {
            i += 1;
            continue;
        };
        if t.sizes()[i] != t.sizes()[j] {
            let name = match labels[i] {
                Label::Letter(c) => c as char,
                Label::Ellipsis(_) => '.',
            };
            return Err(Error::runtime(format!(
                "einsum(): subscript {name} is repeated for operand but the sizes don't match, {} != {}",
                t.sizes()[i],
                t.sizes()[j]
            )));
        }
        t = ops::diagonal_with(
            &t,
            ops::DiagonalOptions {
                offset: 0,
                dim1: i as i64,
                dim2: j as i64,
            },
        )?;
        let l = labels.remove(j);
        labels.remove(i);
        labels.push(l);
        i = 0;
    }
    Ok((t, labels))
}

/// A label as PyTorch's messages name it.
fn label_name(label: Label) -> String {
    match label {
        Label::Letter(c) => (c as char).to_string(),
        Label::Ellipsis(_) => "...".to_string(),
    }
}

/// The aligned operands contracted left to right (a label is summed once
/// no later operand has it) down to the `out_dims` output dimensions of
/// the `total` labels.
fn contract(aligned: &[Tensor], out_dims: usize, total: usize) -> Result<Tensor> {
    let has = |t: &Tensor, d: usize| t.sizes()[d] != 1;
    let mut result = aligned[0].clone();
    for k in 1..aligned.len() {
        let later = &aligned[k + 1..];
        let sum_dims: Vec<usize> = (out_dims..total)
            .filter(|&d| !later.iter().any(|t| has(t, d)))
            .collect();
        result = sumproduct_pair(&result, &aligned[k], &sum_dims)?;
    }
    if total == out_dims {
        return Ok(result);
    }
    // A single operand's contracted labels are summed; the pairs' are
    // already ones, and dropped.
    if aligned.len() == 1 {
        let all: Vec<i64> = (out_dims as i64..total as i64).collect();
        ops::sum_dim_intlist_with(
            &result,
            Some(&all),
            ops::SumDimIntlistOptions {
                keepdim: false,
                dtype: None,
            },
        )
    } else {
        ops::reshape(&result, &result.sizes()[..out_dims])
    }
}

/// `sumproduct_pair(left, right, sum_dims, keepdim=True)`: the product of
/// two tensors of one rank, summed over `sum_dims`, as one batched matrix
/// product: the dimensions both have are the batch, those one side has
/// its rows or columns.
fn sumproduct_pair(left: &Tensor, right: &Tensor, sum_dims: &[usize]) -> Result<Tensor> {
    let ndim = left.dim();
    let (mut left, mut right) = (left.clone(), right.clone());
    let (mut lro, mut lo, mut ro, mut sum) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let keep = ops::SumDimIntlistOptions {
        keepdim: true,
        dtype: None,
    };
    for d in 0..ndim {
        let (l, r) = (left.sizes()[d] != 1, right.sizes()[d] != 1);
        if sum_dims.contains(&d) {
            match (l, r) {
                (true, true) => sum.push(d),
                (true, false) => {
                    left = ops::sum_dim_intlist_with(&left, Some(&[d as i64]), keep.clone())?
                }
                (false, true) => {
                    right = ops::sum_dim_intlist_with(&right, Some(&[d as i64]), keep.clone())?
                }
                (false, false) => {}
            }
        } else {
            match (l, r) {
                (true, true) => lro.push(d),
                (true, false) => lo.push(d),
                (false, true) => ro.push(d),
                (false, false) => lro.push(d),
            }
        }
    }
    let size = |t: &Tensor, dims: &[usize]| dims.iter().map(|&d| t.sizes()[d]).product::<i64>();
    let (lro_size, lo_size, ro_size, sum_size) = (
        size(&left, &lro),
        size(&left, &lo),
        size(&right, &ro),
        size(&left, &sum),
    );
    // Dimensions summed away or of size one on both sides.
    let ones: Vec<usize> = sum_dims
        .iter()
        .copied()
        .filter(|d| !sum.contains(d))
        .collect();
    let as_i64 = |v: &[usize]| v.iter().map(|&d| d as i64).collect::<Vec<_>>();
    let left_perm = as_i64(&[&lro[..], &lo, &sum, &ro, &ones].concat());
    let right_perm = as_i64(&[&lro[..], &sum, &ro, &lo, &ones].concat());
    let l = ops::reshape(
        &ops::permute(&left, &left_perm)?,
        &[lro_size, lo_size, sum_size],
    )?;
    let r = ops::reshape(
        &ops::permute(&right, &right_perm)?,
        &[lro_size, sum_size, ro_size],
    )?;
    let product = ops::bmm(&l, &r)?;
    // The product's dimensions, in the order lro, lo, ro, back to their
    // original order, with the summed ones kept as ones.
    let out_order: Vec<usize> = [lro, lo, ro].concat();
    let size_of = |d: usize| left.sizes()[d].max(right.sizes()[d]);
    let grouped: Vec<i64> = out_order.iter().map(|&d| size_of(d)).collect();
    let product = ops::reshape(&product, &grouped)?;
    let mut by_dim: Vec<(usize, usize)> = out_order
        .iter()
        .enumerate()
        .map(|(pos, &d)| (d, pos))
        .collect();
    by_dim.sort_unstable();
    let perm: Vec<i64> = by_dim.iter().map(|&(_, pos)| pos as i64).collect();
    let product = ops::permute(&product, &perm)?;
    let full: Vec<i64> = (0..ndim)
        .map(|d| {
            if out_order.contains(&d) {
                size_of(d)
            } else {
                1
            }
        })
        .collect();
    ops::reshape(&product, &full)
}

/// `tensordot(self, other, dims_self, dims_other)`: `self`'s and `other`'s
/// listed dimensions contracted, the rest kept in order.
pub fn tensordot(
    self_: &Tensor,
    other: &Tensor,
    dims_self: &[i64],
    dims_other: &[i64],
) -> Result<Tensor> {
    if dims_self.len() != dims_other.len() {
        return Err(Error::runtime(format!(
            "both dimension lists should have same length, but got {} and {}",
            dims_self.len(),
            dims_other.len()
        )));
    }
    let (sa, sb) = (self_.sizes(), other.sizes());
    let wa = dims_self
        .iter()
        .map(|&d| wrap_dim(d, sa.len()))
        .collect::<Result<Vec<_>>>()?;
    let wb = dims_other
        .iter()
        .map(|&d| wrap_dim(d, sb.len()))
        .collect::<Result<Vec<_>>>()?;
    for (a, b) in wa.iter().zip(&wb) {
        if sa[*a] != sb[*b] {
            return Err(Error::runtime(format!(
                "contracted dimensions need to match, but first has size {} in dim {a} and second has size {} in dim {b}",
                sa[*a], sb[*b]
            )));
        }
    }
    let free_a: Vec<usize> = (0..sa.len()).filter(|d| !wa.contains(d)).collect();
    let free_b: Vec<usize> = (0..sb.len()).filter(|d| !wb.contains(d)).collect();
    let prod = |s: &[i64], dims: &[usize]| dims.iter().map(|&d| s[d]).product::<i64>();
    let csize = prod(&sa, &wa);
    let perm_a: Vec<i64> = free_a.iter().chain(&wa).map(|&d| d as i64).collect();
    let perm_b: Vec<i64> = wb.iter().chain(&free_b).map(|&d| d as i64).collect();
    let a = ops::reshape(&ops::permute(self_, &perm_a)?, &[prod(&sa, &free_a), csize])?;
    let b = ops::reshape(&ops::permute(other, &perm_b)?, &[csize, prod(&sb, &free_b)])?;
    let mut shape: Vec<i64> = free_a.iter().map(|&d| sa[d]).collect();
    shape.extend(free_b.iter().map(|&d| sb[d]));
    ops::reshape(&ops::mm(&a, &b)?, &shape)
}

/// `inner(self, other)`: a product with a 0-dim operand, else `tensordot`
/// over both last dimensions.
pub fn inner(self_: &Tensor, other: &Tensor) -> Result<Tensor> {
    if self_.dim() == 0 || other.dim() == 0 {
        return ops::mul_tensor(self_, other);
    }
    let (a, b) = (self_.sizes(), other.sizes());
    if a[a.len() - 1] != b[b.len() - 1] {
        return Err(Error::runtime(format!(
            "inner() the last dimension must match on both input tensors but got shapes {} and {}",
            fmt_list(&a),
            fmt_list(&b)
        )));
    }
    tensordot(self_, other, &[-1], &[-1])
}

/// `outer(self, vec2)`: `self` as a column times `vec2`.
pub fn outer(self_: &Tensor, vec2: &Tensor) -> Result<Tensor> {
    if self_.dim() != 1 || vec2.dim() != 1 {
        return Err(Error::runtime(format!(
            "outer: Expected 1-D argument self, but got {}-D",
            if self_.dim() != 1 {
                self_.dim()
            } else {
                vec2.dim()
            }
        )));
    }
    ops::mul_tensor(&ops::reshape(self_, &[self_.sizes()[0], 1])?, vec2)
}

/// `ger(self, vec2)`: `outer`.
pub fn ger(self_: &Tensor, vec2: &Tensor) -> Result<Tensor> {
    outer(self_, vec2)
}
