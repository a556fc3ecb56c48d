//! The CUDA kernel templates and their instantiations.
//!
//! The CUDA C++ lives in `cu/` as templates: `prelude.cuh` (16-bit float
//! types, conversions with c10's semantics, limits, warp shuffles, block
//! reductions), `pointwise.cu`, `reduce.cu`, `scan.cu` and `row.cu`. An
//! [`Instantiation`] names one concrete kernel (operator, dtypes, layout)
//! and renders its source: the prelude, its family's template and one
//! `extern "C"` entry point that instantiates the template, so that every
//! instantiation compiles on its own and its PTX holds exactly one entry
//! point, named by [`Instantiation::entry_point`].
//!
//! [`all_instantiations`] lists every kernel the backend uses; the
//! `nvrtc_templates` test compiles each of them.
//!
//! Invariant: an instantiation's source depends only on its key, so the
//! compiled-kernel cache may key PTX by the source text.

pub mod dtype;
pub mod params;
pub mod pointwise;
pub mod reduce;
pub mod row;

pub use dtype::Dtype;
pub use params::{IntDivider, ReduceShape, ScanShape, StridedParams};
pub use pointwise::{BinaryOp, Layout, PointwiseKernel, PointwiseOp, UnaryOp, MAX_STRIDED_DIMS};
pub use reduce::{ReduceKernel, ReduceOp, ScanKernel, ScanOp};
pub use row::{RowKernel, RowOp};

/// The prelude every source starts with.
pub const PRELUDE: &str = include_str!("cu/prelude.cuh");
/// The element-wise loops and operators.
pub const POINTWISE_TEMPLATE: &str = include_str!("cu/pointwise.cu");
/// The one-dimension reductions.
pub const REDUCE_TEMPLATE: &str = include_str!("cu/reduce.cu");
/// The scans.
pub const SCAN_TEMPLATE: &str = include_str!("cu/scan.cu");
/// The row kernels (softmax, log_softmax, layer_norm).
pub const ROW_TEMPLATE: &str = include_str!("cu/row.cu");

/// One concrete kernel: its family and key.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Instantiation {
    /// An element-wise kernel.
    Pointwise(PointwiseKernel),
    /// A reduction over one dimension.
    Reduce(ReduceKernel),
    /// A scan along one dimension.
    Scan(ScanKernel),
    /// A row kernel.
    Row(RowKernel),
}

impl Instantiation {
    /// The name of the `extern "C"` entry point its source defines.
    pub fn entry_point(&self) -> String {
        match self {
            Instantiation::Pointwise(k) => k.entry_point(),
            Instantiation::Reduce(k) => k.entry_point(),
            Instantiation::Scan(k) => k.entry_point(),
            Instantiation::Row(k) => k.entry_point(),
        }
    }

    /// The complete CUDA C++ source of this one kernel, ready for NVRTC.
    pub fn source(&self) -> String {
        module_source(std::slice::from_ref(self))
    }

    /// The family's template, which the entry point instantiates.
    fn template(&self) -> &'static str {
        match self {
            Instantiation::Pointwise(_) => POINTWISE_TEMPLATE,
            Instantiation::Reduce(_) => REDUCE_TEMPLATE,
            Instantiation::Scan(_) => SCAN_TEMPLATE,
            Instantiation::Row(_) => ROW_TEMPLATE,
        }
    }

    /// The `extern "C"` entry point's definition.
    fn render_entry(&self) -> String {
        match self {
            Instantiation::Pointwise(k) => k.render_entry(),
            Instantiation::Reduce(k) => k.render_entry(),
            Instantiation::Scan(k) => k.render_entry(),
            Instantiation::Row(k) => k.render_entry(),
        }
    }
}

/// The symbol of an instantiated kernel, as the sources name their entry
/// points: `at_{family}_{op}_{input}_{output}`.
pub(crate) fn entry_name(family: &str, op: &str, input: Dtype, output: Dtype) -> String {
    format!(
        "at_{family}_{op}_{}_{}",
        input.short_name(),
        output.short_name()
    )
}

/// One source defining the entry points of several instantiations (one
/// NVRTC program, one module to load): the prelude, each family's
/// template once, then every entry point. The families' templates share
/// no names, so any mix compiles; each entry point is the same text as in
/// its own [`Instantiation::source`].
pub fn module_source(kernels: &[Instantiation]) -> String {
    let mut templates: Vec<&'static str> = Vec::new();
    for kernel in kernels {
        let template = kernel.template();
        if !templates.iter().any(|t| std::ptr::eq(*t, template)) {
            templates.push(template);
        }
    }
    let mut source = String::new();
    match kernels {
        [one] => {
            source.push_str("// aten-native-cuda kernel ");
            source.push_str(&one.entry_point());
        }
        _ => source.push_str(&format!(
            "// aten-native-cuda module of {} kernels",
            kernels.len()
        )),
    }
    source.push('\n');
    source.push_str(PRELUDE);
    for template in templates {
        source.push('\n');
        source.push_str(template);
    }
    for kernel in kernels {
        source.push('\n');
        source.push_str(&kernel.render_entry());
    }
    source
}

/// Every instantiation the backend uses: each pointwise operator on each
/// supported dtype pair in each layout, then the reductions, scans and row
/// kernels on their supported dtypes. The order is stable.
pub fn all_instantiations() -> Vec<Instantiation> {
    let mut all: Vec<Instantiation> = PointwiseKernel::all()
        .into_iter()
        .map(Instantiation::Pointwise)
        .collect();
    all.extend(ReduceKernel::all().into_iter().map(Instantiation::Reduce));
    all.extend(ScanKernel::all().into_iter().map(Instantiation::Scan));
    all.extend(RowKernel::all().into_iter().map(Instantiation::Row));
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn entry_points_are_unique() {
        let all = all_instantiations();
        let names: HashSet<String> = all.iter().map(|k| k.entry_point()).collect();
        assert_eq!(names.len(), all.len());
    }

    #[test]
    fn every_family_is_listed() {
        let all = all_instantiations();
        assert!(all.iter().any(|k| matches!(k, Instantiation::Reduce(_))));
        assert!(all.iter().any(|k| matches!(k, Instantiation::Scan(_))));
        assert!(all.iter().any(|k| matches!(k, Instantiation::Row(_))));
        for op in UnaryOp::ALL {
            assert!(all.iter().any(
                |k| matches!(k, Instantiation::Pointwise(p) if p.op == PointwiseOp::Unary(op))
            ));
        }
    }

    #[test]
    fn source_defines_its_entry_point_once() {
        let k = Instantiation::Reduce(ReduceKernel::new(ReduceOp::Var, Dtype::Float16).unwrap());
        let source = k.source();
        assert!(source.starts_with("// aten-native-cuda kernel at_reduce_var_f16_f16\n"));
        let definition = format!("void {}(", k.entry_point());
        assert_eq!(source.matches(&definition).count(), 1);
        assert_eq!(source.matches("extern \"C\"").count(), 1);
    }

    #[test]
    fn modules_hold_each_template_once() {
        let sum = Instantiation::Reduce(ReduceKernel::new(ReduceOp::Sum, Dtype::Int8).unwrap());
        let prod = Instantiation::Reduce(ReduceKernel::new(ReduceOp::Prod, Dtype::Int8).unwrap());
        let cumsum = Instantiation::Scan(ScanKernel::new(ScanOp::Cumsum, Dtype::Int8));
        let source = module_source(&[sum, prod, cumsum]);
        assert!(source.starts_with("// aten-native-cuda module of 3 kernels\n"));
        assert_eq!(source.matches("struct at_reduce_shape {").count(), 1);
        assert_eq!(source.matches("struct at_scan_shape {").count(), 1);
        assert_eq!(source.matches("struct __align__(2) __half {").count(), 1);
        for k in [sum, prod, cumsum] {
            assert_eq!(
                source
                    .matches(&format!("void {}(", k.entry_point()))
                    .count(),
                1
            );
        }
    }
}
